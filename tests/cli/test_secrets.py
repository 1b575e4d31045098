"""Secrets never appear in ferry's output: failing and verbose commands are scanned for the
secret key, the session token and signatures."""
import re

import pytest

SECRET = "SuperSecretKeyValue0123456789abcdefXYZ"
TOKEN = "SessionTokenValue-ABCDEFGHIJKLMNOP-0123456789"


def scan(p):
    text = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    assert SECRET not in text
    assert TOKEN not in text
    # No SigV4 signature (64 hex chars after Signature=) may be printed.
    assert not re.search(r"Signature=[0-9a-f]{64}", text)
    return text


@pytest.mark.parametrize("args", [
    ["ls", "s3://{bucket}/"],
    ["stat", "s3://{bucket}/missing"],
    ["cat", "s3://{bucket}/missing"],
    ["cp", "/etc/hostname", "s3://{bucket}/secret-test"],
    ["auth", "s3://{bucket}"],
])
def test_failing_commands_with_trace_never_print_secrets(ferry, bucket, args):
    args = [a.format(bucket=bucket) for a in args]
    env = {"AWS_SECRET_ACCESS_KEY": SECRET, "AWS_SESSION_TOKEN": TOKEN}
    p = ferry.run("--trace-http", *args, env=env)
    text = scan(p)
    assert p.returncode != 0
    assert "Authorization: [REDACTED]" in text or args[0] == "auth"


def test_successful_trace_redacts_headers(ferry, bucket, rgw):
    p = ferry.run("--trace-http", "ls", f"s3://{bucket}/")
    text = p.stdout.decode() + p.stderr.decode()
    assert p.returncode == 0
    assert rgw["FERRY_TEST_S3_SECRET_KEY"] not in text
    assert "Authorization: [REDACTED]" in text
    assert not re.search(r"Signature=[0-9a-f]{64}", text)


def test_no_option_takes_a_secret_on_the_command_line(ferry, bucket):
    for flag in ["--secret-key", "--access-key", "--session-token"]:
        assert ferry.run("ls", flag, "x", f"s3://{bucket}/").returncode == 2
    # S3 keys are literal: "?secret_key=..." is part of the key, never a credential; ferry says so
    # (without repeating it) and the listing finds nothing.
    p = ferry.run("ls", f"s3://{bucket}/?secret_key=abc")
    assert p.returncode == 1
    assert b"never taken from URLs" in p.stderr


def test_presigned_query_is_not_echoed(ferry):
    url = "http://127.0.0.1:9/x?X-Amz-Signature=" + "ab" * 32 + "&X-Amz-Credential=AKIDLEAK"
    p = ferry.run("cat", url)
    text = scan(p)
    assert "AKIDLEAK" not in text
