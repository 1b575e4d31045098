"""ferry against a real Ceph RGW: every command, unusual keys, errors, boto3 interop."""
import json
import os
import time

import boto3

from conftest import one_line_error


def split(url):
    rest = url[len("s3://"):]
    bucket, _, key = rest.partition("/")
    return bucket, key  # S3 keys are literal in URLs


def test_upload_download_round_trip_multipart(ferry, prefix, tmp_path, s3):
    payload = os.urandom(37 * 1024 * 1024 + 5)  # above the 32 MiB single-PUT limit: 5 parts
    src = tmp_path / "model.pt"
    src.write_bytes(payload)
    ferry.run("cp", src, prefix, check=True)
    bucket, key = split(prefix + "model.pt")
    head = s3.head_object(Bucket=bucket, Key=key)
    assert head["ContentLength"] == len(payload)
    assert head["ETag"].strip('"').endswith("-5")  # uploaded in parts
    ferry.run("cp", prefix + "model.pt", tmp_path / "back.pt", check=True)
    assert (tmp_path / "back.pt").read_bytes() == payload
    assert ferry.run("cat", "--range", "100-199", prefix + "model.pt", check=True).stdout == payload[100:200]


def test_unusual_keys_round_trip_exactly(ferry, prefix, tmp_path, s3):
    # (A key ending in '/' round-trips through the Store API, see the conformance suite; on the
    # command line a trailing '/' means "into this prefix".)
    names = ["with space.txt", "unicodé/日本.bin", "plus+sign", "100%.txt", "q?mark", "a//double",
             "tilde~&=,;'quote"]
    src = tmp_path / "f"
    src.write_bytes(b"x")
    for n in names:
        url = prefix + n  # literal: no escaping
        ferry.run("cp", src, url, check=True)
    bucket, base = split(prefix)
    got = sorted(o["Key"][len(base):] for o in s3.list_objects_v2(Bucket=bucket, Prefix=base)["Contents"])
    assert got == sorted(names)
    listed = [json.loads(l)["key"][len(base):] for l in
              ferry.run("ls", "-r", "--json", prefix, check=True).stdout.decode().splitlines()]
    assert listed == sorted(names)
    # Listing URLs paste back into ferry.
    for line in ferry.run("ls", "-r", "--json", prefix, check=True).stdout.decode().splitlines():
        assert ferry.run("cat", json.loads(line)["url"], check=True).stdout == b"x"


def test_a_local_name_that_is_not_utf8_fails_alone_with_the_reason(ferry, prefix, tmp_path, s3):
    """S3 keys are UTF-8: a file named in Latin-1 is refused before any request, naming it and
    the cause; the rest of the tree is copied and the exit status says something failed."""
    src = tmp_path / "tree"
    src.mkdir()
    (src / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1")
    (src / "ok.txt").write_bytes(b"fine")
    p = ferry.run("cp", "-r", src, prefix)
    err = p.stderr.decode(errors="replace")
    assert p.returncode != 0 and "not UTF-8, as S3 keys must be" in err and "caf" in err, err
    bucket, base = split(prefix)
    got = [o["Key"][len(base):] for o in s3.list_objects_v2(Bucket=bucket, Prefix=base)["Contents"]]
    assert got == ["ok.txt"]
    assert not s3.list_multipart_uploads(Bucket=bucket, Prefix=base).get("Uploads")


def test_ferry_reads_what_boto3_wrote(ferry, prefix, s3, tmp_path):
    bucket, base = split(prefix)
    payload = os.urandom(12 * 1024 * 1024)
    s3.upload_fileobj(__import__("io").BytesIO(payload), bucket, base + "boto.bin",
                      Config=boto3.s3.transfer.TransferConfig(multipart_threshold=5 * 1024 * 1024,
                                                              multipart_chunksize=5 * 1024 * 1024))
    ferry.run("cp", prefix + "boto.bin", tmp_path / "b.bin", check=True)
    assert (tmp_path / "b.bin").read_bytes() == payload


def test_ls_stat_rm(ferry, prefix, tmp_path):
    (tmp_path / "f").write_text("hello")
    for k in ["a/1", "a/2", "b"]:
        ferry.run("cp", tmp_path / "f", prefix + k, check=True)
    assert ferry.run("ls", prefix, check=True).stdout.decode() == "a/\nb\n"
    assert ferry.run("ls", prefix.rstrip("/"), check=True).stdout.decode() == "a/\nb\n"
    st = json.loads(ferry.run("stat", "--json", prefix + "b", check=True).stdout)
    assert st["size"] == 5 and st["etag"]
    out = ferry.run("rm", "-r", prefix + "a", check=True).stdout.decode()
    assert out.count("deleted") == 2
    assert ferry.run("ls", "-r", prefix, check=True).stdout.decode() == "b\n"
    assert ferry.run("rm", prefix + "b").returncode == 0
    p = ferry.run("rm", prefix + "b")
    assert p.returncode == 1 and "no such object" in one_line_error(p)


def test_server_side_copy_within_bucket(ferry, prefix, tmp_path):
    (tmp_path / "f").write_text("copied")
    ferry.run("cp", tmp_path / "f", prefix + "src", check=True)
    ferry.run("cp", prefix + "src", prefix + "dst", check=True)
    assert ferry.run("cat", prefix + "dst", check=True).stdout == b"copied"


def test_mb_and_virtual_hosted_addressing(ferry, rgw, tmp_path):
    bucket = f"ferry-mb-{os.getpid()}"
    ferry.run("mb", f"s3://{bucket}", check=True)
    ferry.run("mb", f"s3://{bucket}", check=True)  # idempotent for the owner
    endpoint = rgw["FERRY_TEST_S3_ENDPOINT"].replace("127.0.0.1", "localhost")
    (tmp_path / "f").write_text("vh")
    # Virtual-hosted addressing is a profile setting (the AWS CLI's `s3 =` sub-section).
    config = tmp_path / "config"
    config.write_text(f"[profile vh]\ns3 =\n  addressing_style = virtual\n  endpoint_url = {endpoint}\n")
    env = {"AWS_CONFIG_FILE": str(config), "AWS_ENDPOINT_URL": None}
    url = f"vh:s3://{bucket}/k"
    ferry.run("cp", tmp_path / "f", url, env=env, check=True)
    assert ferry.run("cat", url, env=env, check=True).stdout == b"vh"
    assert f"{bucket}.localhost" in ferry.run("auth", "--no-check", url, env=env, check=True).stdout.decode()


def test_auth_reports_source_without_secret(ferry, bucket, rgw):
    p = ferry.run("auth", f"s3://{bucket}", check=True)
    out = p.stdout.decode()
    assert "environment variables" in out and "succeeded" in out
    assert rgw["FERRY_TEST_S3_SECRET_KEY"] not in out
    assert rgw["FERRY_TEST_S3_ACCESS_KEY"] not in out  # masked


def test_wrong_secret_is_clear_authentication_error(ferry, bucket):
    p = ferry.run("ls", f"s3://{bucket}/", env={"AWS_SECRET_ACCESS_KEY": "wrong-secret-value"})
    assert p.returncode == 1
    assert "SignatureDoesNotMatch" in one_line_error(p)


def test_missing_bucket_and_key_say_so(ferry, bucket):
    p = ferry.run("ls", "s3://ferry-no-such-bucket/")
    assert p.returncode == 1 and "NoSuchBucket" in one_line_error(p)
    p = ferry.run("cat", f"s3://{bucket}/no/such/key")
    assert p.returncode == 1
    err = one_line_error(p)
    assert "NoSuchKey" in err and "s3://" in err and "no/such/key" in err


def test_unreachable_endpoint_fails_within_bounded_time(ferry, bucket):
    start = time.time()
    p = ferry.run("stat", f"s3://{bucket}/k", env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9"})
    assert p.returncode == 1
    err = one_line_error(p)
    assert "cannot connect" in err and "127.0.0.1:9" in err
    assert time.time() - start < 30


def test_no_credentials_is_a_clear_error(ferry, bucket):
    p = ferry.run("ls", f"s3://{bucket}/", env={"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None})
    assert p.returncode == 1
    assert "no AWS credentials found" in one_line_error(p)


def test_credentials_from_profile_file(ferry, bucket, rgw, tmp_path):
    creds = tmp_path / "credentials"
    creds.write_text(f"[train]\naws_access_key_id = {rgw['FERRY_TEST_S3_ACCESS_KEY']}\n"
                     f"aws_secret_access_key = {rgw['FERRY_TEST_S3_SECRET_KEY']}\n")
    env = {"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None,
           "AWS_SHARED_CREDENTIALS_FILE": str(creds), "AWS_PROFILE": "train"}
    p = ferry.run("auth", f"s3://{bucket}", env=env, check=True)
    assert "profile 'train'" in p.stdout.decode()


def test_rm_recursive_refuses_a_bucket_root(ferry, bucket):
    for url in (f"s3://{bucket}", f"s3://{bucket}/"):
        p = ferry.run("rm", "-r", url)
        assert p.returncode == 2
        assert "refusing to delete everything" in one_line_error(p)


def test_directory_markers_are_not_copied_to_local_disks(ferry, prefix, s3, bucket, tmp_path):
    # Zero-byte "directory" objects (keys ending in '/') made by consoles and other tools.
    base = prefix.split(f"s3://{bucket}/", 1)[1]
    s3.put_object(Bucket=bucket, Key=base + "dir/", Body=b"")
    s3.put_object(Bucket=bucket, Key=base + "dir/a.txt", Body=b"a")
    s3.put_object(Bucket=bucket, Key=base + "empty-dir/", Body=b"")
    p = ferry.run("cp", "-r", prefix, tmp_path / "dl")
    assert p.returncode == 0, p.stderr
    files = sorted(str(f.relative_to(tmp_path / "dl")) for f in (tmp_path / "dl").rglob("*"))
    assert files == ["dir", "dir/a.txt"]
    # To another prefix they are objects like any other.
    p = ferry.run("cp", "-r", prefix, prefix.rstrip("/") + "-copy/")
    assert p.returncode == 0, p.stderr
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=base.rstrip("/") + "-copy/")["Contents"]]
    assert sorted(k.split("-copy/", 1)[1] for k in keys) == ["dir/", "dir/a.txt", "empty-dir/"]
