"""Literal S3 keys and S3 settings outside URLs (issue 16), against a real Ceph RGW.

Whatever `ferry ls` prints pastes back into every verb; endpoints, regions, profiles come from
global flags, the environment, AWS config profiles and the PROFILE:s3:// prefix.
"""
import json

import pytest

from conftest import one_line_error

# Keys S3 allows that a URL parser could mangle: escapes, '?', '#', spaces at either end, unicode,
# an old-style parameter, Hive-style '='.
ODD = ["a%20b?x.txt", "with space.txt", " lead", "trail ", "q?mark", "h#sh", "100%.txt",
       "unicod\u00e9/\u65e5\u672c.bin", "k?endpoint=http://x", "date=2024-01-01/p&q+r.bin", "a//double"]


def split(url):
    bucket, _, key = url[len("s3://"):].partition("/")
    return bucket, key


@pytest.fixture
def odd_objects(prefix, s3):
    """ODD uploaded by boto3 (an independent writer); returns {key-under-prefix: body}."""
    bucket, base = split(prefix)
    bodies = {}
    for i, name in enumerate(ODD):
        bodies[name] = f"body {i}: {name}".encode()
        s3.put_object(Bucket=bucket, Key=base + name, Body=bodies[name])
    return bodies


def test_ls_output_pastes_back_into_every_verb(ferry, prefix, odd_objects, tmp_path, s3):
    listed = ferry.run("ls", "-r", prefix, check=True).stdout.decode("utf-8").split("\n")[:-1]
    assert sorted(listed) == sorted(odd_objects)
    for name in listed:
        url = prefix + name  # exactly what a user pastes: the prefix they listed + a printed line
        assert ferry.run("cat", url, check=True).stdout == odd_objects[name], name
        st = json.loads(ferry.run("stat", "--json", url, check=True).stdout)
        assert st["size"] == len(odd_objects[name])
        assert ferry.run("ls", url, check=True).stdout.decode() == name.rsplit("/", 1)[-1] + "\n"
        ferry.run("cp", url, tmp_path / "one", check=True)
        assert (tmp_path / "one").read_bytes() == odd_objects[name]
        ferry.run("cp", url, url + ".copy", check=True)  # server-side copy, same literal key
    # --json urls paste back as they are.
    for line in ferry.run("ls", "-r", "--json", prefix, check=True).stdout.decode().splitlines():
        obj = json.loads(line)
        assert obj["url"] == prefix + obj["key"][len(split(prefix)[1]):]
        assert ferry.run("cat", obj["url"], check=True).stdout.startswith(b"body ")
    # boto3 sees exactly the keys ferry wrote (the copies), nothing decoded.
    bucket, base = split(prefix)
    got = {o["Key"][len(base):] for o in s3.list_objects_v2(Bucket=bucket, Prefix=base)["Contents"]}
    assert got == set(odd_objects) | {n + ".copy" for n in odd_objects}
    for name in listed:
        p = ferry.run("rm", prefix + name + ".copy", check=True)
        assert b"deleted" in p.stdout
    got = {o["Key"][len(base):] for o in s3.list_objects_v2(Bucket=bucket, Prefix=base)["Contents"]}
    assert got == set(odd_objects)


def test_upload_tree_with_odd_names_and_download_it_back(ferry, prefix, tmp_path):
    src = tmp_path / "src"
    names = [n for n in ODD if "//" not in n]  # a local path folds '//'
    for name in names:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(name.encode())
    ferry.run("cp", "-r", f"{src}/", prefix + "t/", check=True)
    for name in names:
        assert ferry.run("cat", prefix + "t/" + name, check=True).stdout == name.encode()
    ferry.run("cp", "-r", prefix + "t/", f"{tmp_path / 'back'}/", check=True)
    for name in names:
        assert (tmp_path / "back" / name).read_bytes() == name.encode()
    ferry.run("rm", "-r", prefix + "t/", check=True)
    assert ferry.run("ls", prefix + "t/").returncode == 1


def test_old_parameter_form_is_a_key_with_a_warning(ferry, prefix, tmp_path):
    (tmp_path / "f").write_text("x")
    p = ferry.run("cp", tmp_path / "f", prefix + "k?region=us-east-1", check=True)
    err = p.stderr.decode()
    assert "'?region='" in err and "--region" in err and "literal" in err
    assert ferry.run("ls", prefix, check=True).stdout.decode() == "k?region=us-east-1\n"


def test_python_shard_dataset_at_an_odd_prefix(ferry, python, prefix, tmp_path, rgw):
    src = tmp_path / "src"
    for i in range(6):
        (src / f"s{i}.txt").parent.mkdir(parents=True, exist_ok=True)
        (src / f"s{i}.txt").write_text(f"sample {i}")
    ds = prefix + "odd dir%20?#/train"
    ferry.run("shard", "pack", src, ds, check=True)
    assert "train.index.json" in ferry.run("ls", prefix + "odd dir%20?#/", check=True).stdout.decode()
    p = python(f"""
from ferry.data import ShardDataset
print(sorted(s["__key__"] for s in ShardDataset({ds!r}, shuffle=False)))
""")
    assert p.stdout.strip() == str([f"s{i}" for i in range(6)])
    # The same through a profile prefix, with nothing usable in the environment.
    p = python(f"""
from ferry.data import ShardDataset
print(sorted(s["__key__"] for s in ShardDataset({"src:" + ds!r}, shuffle=False)))
""", **write_profiles(tmp_path, rgw))
    assert p.stdout.strip() == str([f"s{i}" for i in range(6)])


def write_profiles(tmp_path, rgw, wrong_env=True):
    """Two profiles for the one RGW under two endpoint names, path- and virtual-hosted."""
    port_url = rgw["FERRY_TEST_S3_ENDPOINT"]
    config = tmp_path / "aws-config"
    config.write_text(f"""[profile src]
endpoint_url = {port_url}
region = {rgw['FERRY_TEST_S3_REGION']}

[profile dst]
region = {rgw['FERRY_TEST_S3_REGION']}
s3 =
  endpoint_url = {port_url.replace('127.0.0.1', 'localhost')}
  addressing_style = virtual
""")
    creds = tmp_path / "aws-credentials"
    creds.write_text("".join(f"[{p}]\naws_access_key_id = {rgw['FERRY_TEST_S3_ACCESS_KEY']}\n"
                             f"aws_secret_access_key = {rgw['FERRY_TEST_S3_SECRET_KEY']}\n"
                             for p in ("src", "dst")))
    env = {"AWS_CONFIG_FILE": str(config), "AWS_SHARED_CREDENTIALS_FILE": str(creds)}
    if wrong_env:
        # Nothing in the environment works: the prefixes' profiles must supply all of it.
        env.update({"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "AKIDWRONG",
                    "AWS_SECRET_ACCESS_KEY": "wrong-secret"})
    return env


def test_copy_between_two_profiles(ferry, prefix, odd_objects, tmp_path, rgw):
    env = write_profiles(tmp_path, rgw)
    bucket, base = split(prefix)
    copy = base.rstrip("/") + "-copy/"
    auth = ferry.run("auth", f"dst:s3://{bucket}/", env=env, check=True).stdout.decode()
    assert f"{bucket}.localhost:" in auth and "virtual-hosted" in auth and "profile 'dst'" in auth
    auth = ferry.run("auth", f"src:s3://{bucket}/", env=env, check=True).stdout.decode()
    assert "127.0.0.1:" in auth and "path" in auth
    ferry.run("cp", "-r", f"src:s3://{bucket}/{base}", f"dst:s3://{bucket}/{copy}", env=env,
              check=True)
    lines = ferry.run("ls", "-r", "--json", f"dst:s3://{bucket}/{copy}", env=env,
                      check=True).stdout.decode().splitlines()
    assert len(lines) == len(odd_objects)
    for line in lines:
        url = json.loads(line)["url"]
        assert url.startswith(f"dst:s3://{bucket}/{copy}")  # the prefix is kept
        name = url[len(f"dst:s3://{bucket}/{copy}"):]
        assert ferry.run("cat", url, env=env, check=True).stdout == odd_objects[name]
        ferry.run("rm", url, env=env, check=True)
    # Single objects, both directions, keys with '?', '#', '%'.
    ferry.run("cp", f"src:s3://{bucket}/{base}a%20b?x.txt", f"dst:s3://{bucket}/{copy}h#2", env=env,
              check=True)
    assert ferry.run("cat", f"src:s3://{bucket}/{copy}h#2", env=env, check=True).stdout == \
        odd_objects["a%20b?x.txt"]
    # Without a prefix the (wrong) environment is used: the prefix really chose the endpoint.
    p = ferry.run("stat", f"s3://{bucket}/{copy}h#2", env=env)
    assert p.returncode == 1 and "127.0.0.1:9" in one_line_error(p)


def test_global_flags_pick_profile_endpoint_and_region(ferry, prefix, odd_objects, tmp_path, rgw):
    env = write_profiles(tmp_path, rgw, wrong_env=False)
    env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"
    url = prefix + "q?mark"
    # --endpoint-url beats AWS_ENDPOINT_URL, before or after the command.
    endpoint = rgw["FERRY_TEST_S3_ENDPOINT"]
    assert ferry.run("--endpoint-url", endpoint, "cat", url, env=env, check=True).stdout == \
        odd_objects["q?mark"]
    assert ferry.run("cat", "--endpoint-url", endpoint, url, env=env, check=True).stdout == \
        odd_objects["q?mark"]
    # --profile: the AWS CLI's order, so clear the environment's endpoint for the profile's.
    env["AWS_ENDPOINT_URL"] = None
    out = ferry.run("auth", "--no-check", "--profile", "dst", url, env=env, check=True).stdout.decode()
    assert "localhost:" in out and "virtual-hosted" in out
    assert ferry.run("--profile", "dst", "cat", url, env=env, check=True).stdout == \
        odd_objects["q?mark"]
    out = ferry.run("auth", "--no-check", "--region", "eu-north-9", url, env=env, check=True)
    assert "eu-north-9" in out.stdout.decode()


def test_no_sign_request_sends_unsigned_requests(ferry, prefix, odd_objects):
    p = ferry.run("--no-sign-request", "cat", prefix + "q?mark")
    assert p.returncode == 1 and "403" in one_line_error(p)  # a private bucket refuses anonymous
    out = ferry.run("auth", "--no-check", "--no-sign-request", prefix).stdout.decode()
    assert "anonymous" in out


def test_mistyped_profile_is_a_one_line_error_naming_it(ferry, bucket, tmp_path, rgw):
    env = write_profiles(tmp_path, rgw, wrong_env=False)
    p = ferry.run("cat", f"srcc:s3://{bucket}/k", env=env)
    assert p.returncode == 1
    err = one_line_error(p)
    assert "AWS profile 'srcc' not found in" in err and str(tmp_path / "aws-config") in err
    for args in (["--profile", "dts", "ls", f"s3://{bucket}/"], ["ls", "--profile", "dts", f"s3://{bucket}/"]):
        p = ferry.run(*args, env=env)
        assert p.returncode == 2, args
        assert "--profile: AWS profile 'dts' not found" in one_line_error(p)
    p = ferry.run("ls", f"s3://{bucket}/", env={**env, "AWS_PROFILE": "nope"})
    assert p.returncode == 1 and "AWS profile 'nope' not found" in one_line_error(p)
    p = ferry.run("cat", "src:https://example.invalid/f", env=env)
    assert p.returncode == 2 and "only to s3:// URLs" in one_line_error(p)


def test_bad_endpoint_flag_is_a_usage_error(ferry, bucket):
    for value, why in (("nas:7480", "must start with http:// or https://"),
                       ("http://h:1/path", "no path")):
        p = ferry.run("--endpoint-url", value, "ls", f"s3://{bucket}/")
        assert p.returncode == 2
        err = one_line_error(p)
        assert err.startswith("ferry: error: --endpoint-url:") and why in err
