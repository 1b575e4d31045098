"""ferry cp as the copy engine: trees both ways, skip of unchanged files, filters, never deleting,
checksums in metadata, resume after kill -9, and a 1 GiB copy through the fault proxy."""
import hashlib
import json
import os
import signal
import subprocess
import time


from conftest import base_env, one_line_error, wait_until_catching


def make_tree(root, files):
    for name, data in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def summary(p):
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def test_tree_upload_download_and_unchanged_skip(ferry, prefix, tmp_path, s3, bucket):
    files = {f"img/{i:03d}.jpg": os.urandom(1000 + i) for i in range(40)}
    files["big/model.pt"] = os.urandom(40 * 1024 * 1024 + 3)  # parallel parts
    files["notes.txt"] = b"hello"
    make_tree(tmp_path / "src", files)
    up = summary(ferry.run("cp", "-r", "--json", tmp_path / "src", prefix, state_dir(tmp_path)))
    assert up["copied"] == len(files) and up["failed"] == 0 and up["verified"] == len(files)
    # Every object carries its CRC32C for later verification.
    key = prefix.split("/", 3)[3] + "big/model.pt"
    head = s3.head_object(Bucket=bucket, Key=key)
    assert len(head["Metadata"]["ferry-crc32c"]) == 8
    down = summary(ferry.run("cp", "-r", "--json", prefix, tmp_path / "back", state_dir(tmp_path)))
    assert down["copied"] == len(files) and down["verified"] == len(files)
    for name, data in files.items():
        assert (tmp_path / "back" / name).read_bytes() == data, name
    # Re-running costs almost nothing: everything unchanged is skipped.
    again = summary(ferry.run("cp", "-r", "--json", tmp_path / "src", prefix, state_dir(tmp_path)))
    assert again["skipped"] == len(files) and again["copied"] == 0
    again = summary(ferry.run("cp", "-r", "--json", prefix, tmp_path / "back", state_dir(tmp_path)))
    assert again["skipped"] == len(files)
    # A changed file is copied again, the rest skipped.
    (tmp_path / "src" / "notes.txt").write_bytes(b"hello, changed")
    third = summary(ferry.run("cp", "-r", "--json", tmp_path / "src", prefix, state_dir(tmp_path)))
    assert third["copied"] == 1 and third["skipped"] == len(files) - 1


def state_dir(tmp_path):
    return f"--state-dir={tmp_path / 'state'}"


def test_filters_and_never_deleting(ferry, prefix, tmp_path):
    make_tree(tmp_path / "src", {"a.bin": b"a", "b.tmp": b"b", "logs/x.log": b"x", "keep/c.bin": b"c"})
    ferry.run("cp", tmp_path / "src" / "a.bin", prefix + "only-at-destination", check=True)
    r = summary(ferry.run("cp", "-r", "--json", "--exclude", "*.tmp", "--exclude", "logs/*",
                          tmp_path / "src", prefix, state_dir(tmp_path)))
    assert r["copied"] == 2
    listed = ferry.run("ls", "-r", prefix, check=True).stdout.decode().split()
    assert listed == ["a.bin", "keep/c.bin", "only-at-destination"]
    r = summary(ferry.run("cp", "-r", "--json", "--include", "*.tmp", tmp_path / "src",
                          prefix + "inc/", state_dir(tmp_path)))
    assert r["copied"] == 1, r


def test_objects_from_other_tools_are_verified_by_md5(ferry, prefix, tmp_path, s3, bucket):
    key = prefix.split("/", 3)[3] + "from-boto.bin"
    data = os.urandom(300000)
    s3.put_object(Bucket=bucket, Key=key, Body=data)
    r = summary(ferry.run("cp", "--json", prefix + "from-boto.bin", tmp_path / "x.bin", state_dir(tmp_path)))
    assert r["verified"] == 1 and (tmp_path / "x.bin").read_bytes() == data
    # And an unchanged local copy of it is recognised by MD5.
    r = summary(ferry.run("cp", "--json", prefix + "from-boto.bin", tmp_path / "x.bin", state_dir(tmp_path)))
    assert r["skipped"] == 1


def test_server_side_copy_between_buckets(ferry, prefix, tmp_path):
    make_tree(tmp_path / "src", {"m.bin": os.urandom(5000)})
    ferry.run("cp", "-r", tmp_path / "src", prefix, check=True)
    ferry.run("mb", "s3://ferry-copy-target", check=True)
    r = summary(ferry.run("cp", "--json", prefix + "m.bin", "s3://ferry-copy-target/m.bin", state_dir(tmp_path)))
    assert r["server_side"] == 1
    assert (r["files"], r["copied"], r["bytes"], r["bytes_copied"]) == (1, 1, 5000, 5000)
    assert ferry.run("cat", "s3://ferry-copy-target/m.bin", check=True).stdout == (tmp_path / "src/m.bin").read_bytes()


def test_directory_without_r_is_a_usage_error(ferry, tmp_path):
    make_tree(tmp_path / "d", {"x": b"1"})
    p = ferry.run("cp", tmp_path / "d", tmp_path / "out")
    assert p.returncode == 2
    assert "use -r" in one_line_error(p)


def test_kill_9_then_rerun_resumes_large_upload(ferry, fault_proxy, prefix, tmp_path, rgw):
    data = os.urandom(96 * 1024 * 1024)
    (tmp_path / "big.bin").write_bytes(data)
    # A slow link (delayed chunks) so the copy is still running when we kill it.
    with fault_proxy("--faults", "0", "--delay-ms", "3") as proxy:
        env = base_env(rgw, AWS_ENDPOINT_URL=proxy.endpoint)
        proc = subprocess.Popen([ferry.binary, "cp", "--part-concurrency", "2", state_dir(tmp_path),
                                 str(tmp_path / "big.bin"), prefix + "big.bin"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        journal_dir = tmp_path / "state" / "transfers"
        deadline = time.time() + 60
        while time.time() < deadline:
            journals = list(journal_dir.glob("*.journal")) if journal_dir.exists() else []
            if journals and journals[0].read_text().count("\npart ") >= 3:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert ferry.run("stat", prefix + "big.bin").returncode == 1  # nothing visible yet
    r = summary(ferry.run("cp", "--json", state_dir(tmp_path), tmp_path / "big.bin", prefix + "big.bin"))
    assert r["bytes_resumed"] >= 3 * 8 * 1024 * 1024
    back = ferry.run("cat", prefix + "big.bin", check=True).stdout
    assert hashlib.sha256(back).digest() == hashlib.sha256(data).digest()
    assert not list((tmp_path / "state" / "transfers").glob("*.journal"))


def test_interrupt_keeps_state_and_exits_130(ferry, fault_proxy, prefix, tmp_path, rgw):
    (tmp_path / "big.bin").write_bytes(os.urandom(48 * 1024 * 1024))
    with fault_proxy("--faults", "0", "--delay-ms", "25") as proxy:
        env = base_env(rgw, AWS_ENDPOINT_URL=proxy.endpoint)
        proc = subprocess.Popen([ferry.binary, "cp", state_dir(tmp_path), str(tmp_path / "big.bin"),
                                 prefix + "big.bin"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_until_catching(proc.pid, signal.SIGINT)  # the ASan build starts in 1-2 s under load
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"run the same command again to resume" in err
    r = summary(ferry.run("cp", "--json", state_dir(tmp_path), tmp_path / "big.bin", prefix + "big.bin"))
    assert r["copied"] == 1, r


def test_one_gib_copy_through_fault_proxy_is_exact(ferry, fault_proxy, prefix, tmp_path):
    size = 1024 * 1024 * 1024
    src = tmp_path / "gib.bin"
    with open(src, "wb") as f:
        block = os.urandom(1024 * 1024)
        for i in range(1024):
            f.write(block[i:] + block[:i])
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    # Uploads: connections reset while the client sends; downloads: while the server answers.
    with fault_proxy("--faults", "6", "--reset-after-up", str(3 * 1024 * 1024)) as proxy:
        up = ferry.run("cp", "--json", "--no-progress", state_dir(tmp_path), src, prefix + "gib.bin",
                       env={"AWS_ENDPOINT_URL": proxy.endpoint}, timeout=600)
    assert up.returncode == 0, up.stderr.decode()
    with fault_proxy("--faults", "6", "--reset-after", str(3 * 1024 * 1024)) as proxy:
        down = ferry.run("cp", "--json", "--no-progress", state_dir(tmp_path), prefix + "gib.bin",
                         tmp_path / "back.bin", env={"AWS_ENDPOINT_URL": proxy.endpoint}, timeout=600)
    assert down.returncode == 0, down.stderr.decode()
    assert json.loads(up.stdout)["retries"] >= 1 and json.loads(down.stdout)["retries"] >= 1
    assert json.loads(down.stdout)["verified"] == 1
    os.remove(src)
    assert hashlib.sha256((tmp_path / "back.bin").read_bytes()).hexdigest() == digest
    assert os.path.getsize(tmp_path / "back.bin") == size


def test_large_upload_records_its_crc32c_after_completion(ferry, prefix, tmp_path, s3, bucket):
    # A multipart upload of a local file reads it once: the CRC32C combined from the parts is
    # recorded after CompleteMultipartUpload (CopyObject onto itself), in the same metadata a
    # single PUT carries.
    data = os.urandom(40 * 1024 * 1024 + 5)
    (tmp_path / "model.pt").write_bytes(data)
    keyp = prefix.split("/", 3)[3]
    parts = summary(ferry.run("cp", "--json", state_dir(tmp_path), tmp_path / "model.pt", prefix + "parts.pt"))
    assert parts["copied"] == 1 and parts["verified"] == 1
    whole = summary(ferry.run("cp", "--json", "--part-size", "64M", state_dir(tmp_path), tmp_path / "model.pt",
                              prefix + "whole.pt"))
    assert whole["copied"] == 1
    h_parts = s3.head_object(Bucket=bucket, Key=keyp + "parts.pt")
    h_whole = s3.head_object(Bucket=bucket, Key=keyp + "whole.pt")
    assert h_parts["ETag"].strip('"').endswith("-6")  # multipart: 5 parts of 8 MiB and a tail
    assert "-" not in h_whole["ETag"]
    assert h_parts["Metadata"]["ferry-crc32c"] == h_whole["Metadata"]["ferry-crc32c"]
    assert h_parts["ContentType"] == h_whole["ContentType"]
    # Downloads verify it; a rerun finds it unchanged.
    down = summary(ferry.run("cp", "--json", state_dir(tmp_path), prefix + "parts.pt", tmp_path / "back.pt"))
    assert down["verified"] == 1 and (tmp_path / "back.pt").read_bytes() == data
    again = summary(ferry.run("cp", "--json", state_dir(tmp_path), tmp_path / "model.pt", prefix + "parts.pt"))
    assert again["skipped"] == 1


def test_download_verifies_multipart_objects_with_the_checksum_set_at_creation(
        ferry, prefix, tmp_path, s3, bucket):
    # Ferry before one-read uploads put the CRC32C in CreateMultipartUpload's metadata: such
    # objects (here made with boto3) download verified, and a wrong checksum is caught.
    from boto3.s3.transfer import TransferConfig
    data = os.urandom(36 * 1024 * 1024)
    (tmp_path / "o.bin").write_bytes(data)
    keyp = prefix.split("/", 3)[3]
    summary(ferry.run("cp", "--json", state_dir(tmp_path), tmp_path / "o.bin", prefix + "ref.bin"))
    crc = s3.head_object(Bucket=bucket, Key=keyp + "ref.bin")["Metadata"]["ferry-crc32c"]
    cfg = TransferConfig(multipart_threshold=8 * 1024 * 1024, multipart_chunksize=8 * 1024 * 1024)
    bad = f"{int(crc, 16) ^ 1:08x}"
    for name, value in (("old.bin", crc), ("bad.bin", bad)):
        s3.upload_file(str(tmp_path / "o.bin"), bucket, keyp + name, Config=cfg,
                       ExtraArgs={"Metadata": {"ferry-crc32c": value}})
        assert s3.head_object(Bucket=bucket, Key=keyp + name)["ETag"].strip('"').endswith("-5")
    down = summary(ferry.run("cp", "--json", state_dir(tmp_path), prefix + "old.bin", tmp_path / "old.bin"))
    assert down["verified"] == 1 and (tmp_path / "old.bin").read_bytes() == data
    r = ferry.run("cp", state_dir(tmp_path), prefix + "bad.bin", tmp_path / "bad.bin")
    assert r.returncode == 1 and b"checksum mismatch" in r.stderr, r.stderr.decode()
    assert not (tmp_path / "bad.bin").exists()
