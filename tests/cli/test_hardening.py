"""Issue 10's findings, each as a regression test: symlinks out of a tree, symlink loops, signals
in every phase, secrets in URLs, strict URL parsing, temp files, exit codes and --json errors.
(The mount, trickle/throttle and ferry run stage-out findings have tests in test_mount.py,
test_faults.py and test_run.py.)"""
import functools
import http.server
import json
import os
import signal
import subprocess
import threading
import time

import pytest

CANARY = b"CANARY-outside-the-tree-0xC0FFEE"


def make_tree(root, files):
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def all_objects(s3, bucket, prefix):
    key_prefix = prefix.split(f"s3://{bucket}/", 1)[1]
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=key_prefix):
        for o in page.get("Contents", []):
            out[o["Key"][len(key_prefix):]] = s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
    return out


@pytest.fixture
def tree_with_links(tmp_path):
    """out/ holds two files and every kind of link; outside/ holds a canary secret."""
    outside = tmp_path / "outside"
    make_tree(outside, {"shadow": CANARY, "sub/deep": CANARY})
    out = tmp_path / "out"
    make_tree(out, {"model.pt": b"weights", "step_1/ckpt.pt": b"ckpt-1"})
    (out / "etc").symlink_to(outside)                    # a directory out of the tree
    (out / "pw").symlink_to(outside / "shadow")          # a file out of the tree
    (out / "step_1" / "rel").symlink_to("../../outside/shadow")  # relative, out of the tree
    (out / "latest").symlink_to("step_1")               # a directory inside the tree
    (out / "latest.pt").symlink_to("model.pt")          # a file inside the tree
    (out / "l1").symlink_to(".")                         # loops
    (out / "l2").symlink_to(".")
    (out / "step_1" / "loop").symlink_to("..")
    return out


def test_links_out_of_the_tree_never_reach_the_store(ferry, tree_with_links, prefix, s3, bucket):
    p = ferry.run("cp", "-r", "--json", tree_with_links, prefix, timeout=60)
    assert p.returncode == 0, p.stderr
    objects = all_objects(s3, bucket, prefix)
    assert sorted(objects) == ["latest.pt", "model.pt", "step_1/ckpt.pt"]
    assert all(CANARY not in v for v in objects.values())
    report = json.loads(p.stdout)
    reasons = {e["key"].rsplit("/out/", 1)[1]: e["reason"] for e in report["left_out"]}
    assert reasons == {"etc/": "link-outside-tree", "pw": "link-outside-tree",
                       "step_1/rel": "link-outside-tree", "latest/": "link-to-directory",
                       "l1/": "link-to-directory", "l2/": "link-to-directory",
                       "step_1/loop/": "link-to-directory"}
    assert report["left_out_count"] == 7
    # One warning line per link that leads out of the tree.
    warnings = [l for l in p.stderr.decode().splitlines() if "outside the listed tree" in l]
    assert len(warnings) == 3


def test_follow_links_copies_through_links_and_loops_still_end(ferry, tree_with_links, prefix, s3,
                                                                 bucket):
    p = ferry.run("cp", "-r", "-L", tree_with_links, prefix, timeout=60)
    assert p.returncode == 0, p.stderr
    objects = all_objects(s3, bucket, prefix)
    # Everything once per path through the links; the loops (l1, l2, step_1/loop) add nothing.
    assert sorted(objects) == ["etc/shadow", "etc/sub/deep", "latest.pt", "latest/ckpt.pt",
                               "latest/rel", "model.pt", "pw", "step_1/ckpt.pt", "step_1/rel"]
    assert p.stderr.decode().count("directory loop back to") == 4  # l1, l2 and both ../loop


def test_ferry_run_output_with_links_uploads_nothing_from_outside(ferry, tree_with_links, prefix,
                                                                   s3, bucket):
    p = ferry.run("run", "--out", f"{tree_with_links}={prefix}", "--", "true", timeout=60)
    assert p.returncode == 0, p.stderr
    objects = all_objects(s3, bucket, prefix)
    assert all(CANARY not in v for v in objects.values())
    manifest = json.loads(objects["_ferry/manifest.json"])
    names = [f["path"] if isinstance(f, dict) and "path" in f else f for f in manifest["files"]]
    assert not any("shadow" in json.dumps(n) or "etc/" in json.dumps(n) for n in names)


def test_ferry_run_follow_links_uploads_link_targets(ferry, tree_with_links, prefix, s3, bucket):
    p = ferry.run("run", "-L", "--out", f"{tree_with_links}={prefix}", "--", "true", timeout=60)
    assert p.returncode == 0, p.stderr
    objects = all_objects(s3, bucket, prefix)
    assert objects["etc/shadow"] == CANARY and objects["pw"] == CANARY


def test_symlink_loops_end_quickly_and_copy_each_file_once(ferry, tmp_path):
    src = tmp_path / "src"
    make_tree(src, {"a": b"1", "d/b": b"2"})
    (src / "l1").symlink_to(".")
    (src / "l2").symlink_to(".")
    (src / "d" / "loop").symlink_to("..")
    for follow in ([], ["-L"]):
        dst = tmp_path / f"dst{len(follow)}"
        start = time.monotonic()
        p = ferry.run("cp", "-r", *follow, src, dst, timeout=30)
        assert p.returncode == 0, p.stderr
        assert time.monotonic() - start < 10
        files = sorted(str(f.relative_to(dst)) for f in dst.rglob("*") if f.is_file())
        assert files == ["a", "d/b"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signals_stop_every_phase_within_a_second(ferry_bin, rgw, tmp_path, sig):
    from conftest import base_env, wait_until_catching
    src = tmp_path / "big"
    for d in range(40):
        (src / f"d{d}").mkdir(parents=True)
        for f in range(500):
            (src / f"d{d}" / f"f{f}").write_bytes(b"x" * 64)
    env = base_env(rgw)
    # The sanitizer build's leak check at exit (a second or more on a loaded machine) is not
    # ferry stopping; other tests keep it on.
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))
    for delay in (0.3, 0.8, 2.0):  # listing, planning, copying
        dst = tmp_path / f"dst-{delay}"
        proc = subprocess.Popen([ferry_bin, "cp", "-r", "--transfers", "1", "--no-progress",
                                 str(src), str(dst)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # The phases are timed from when ferry handles the signal: before that (the sanitizer
        # build's start-up took over 0.3 s on a loaded CI machine) the signal's default action
        # ends it, with nothing started.
        wait_until_catching(proc.pid, sig)
        time.sleep(delay)
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
        assert proc.returncode == 130, (delay, proc.returncode, err)
        assert took < 1.0, f"stopped {took:.2f} s after the signal (delay {delay})"
        assert b"interrupted" in err


class QueryBlindHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a directory and ignores query strings (like a presigned-URL server would check
    them); silent; remembers every request target."""
    targets = []

    def log_message(self, *args):
        pass

    def send_head(self):
        QueryBlindHandler.targets.append(self.path)
        return super().send_head()


@pytest.fixture
def web(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QueryBlindHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


SIG = "SiGnAtUrEsEcReT0123456789"


def no_query_secrets(p):
    text = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    assert SIG not in text, text
    assert "AKIDLEAK" not in text
    return text


def test_presigned_and_token_urls_never_show_their_query(ferry, web, tmp_path):
    root, base = web
    (root / "model.bin").write_bytes(b"m" * 1000)
    url = (f"{base}/model.bin?X-Amz-Signature={SIG}&X-Amz-Security-Token={SIG}"
           f"&X-Amz-Credential=AKIDLEAK&sig={SIG}&token={SIG}")
    for args in (["ls", url], ["ls", "--json", url], ["stat", "--json", url],
                 ["--trace-http", "stat", url], ["-v", "cat", url]):
        p = ferry.run(*args)
        assert p.returncode == 0, p.stderr
        no_query_secrets(p)
    listed = json.loads(ferry.run("stat", "--json", url).stdout)
    assert listed.get("key", "model.bin").endswith("model.bin")
    # A local file name comes from the path, not the query.
    dest = tmp_path / "dl"
    dest.mkdir()
    p = ferry.run("cp", url, f"{dest}/")
    assert p.returncode == 0, p.stderr
    no_query_secrets(p)
    assert [f.name for f in dest.iterdir()] == ["model.bin"]
    assert (dest / "model.bin").read_bytes() == b"m" * 1000
    # Errors (missing object, refused connection) never echo it either.
    for bad in (f"{base}/missing.bin?token={SIG}&sig={SIG}",
                f"http://127.0.0.1:9/x?password={SIG}&sig={SIG}"):
        for args in (["cat", bad], ["--trace-http", "stat", bad], ["cp", bad, f"{dest}/"],
                     ["shard", "ls", bad]):
            p = ferry.run(*args, timeout=60)
            assert p.returncode == 1, (args, p.stderr)
            no_query_secrets(p)


def test_userinfo_is_refused_and_never_printed(ferry, bucket, rgw):
    endpoint = rgw["FERRY_TEST_S3_ENDPOINT"].replace("http://", f"http://user:{SIG}@")
    p = ferry.run("--trace-http", "--endpoint-url", endpoint, "ls", f"s3://{bucket}/")
    assert p.returncode == 2
    assert "user:password@" in no_query_secrets(p)
    p = ferry.run("--trace-http", "ls", f"s3://user:{SIG}@{bucket}/")
    assert p.returncode == 2
    assert "user:password@" in no_query_secrets(p)
    p = ferry.run("--trace-http", "ls", f"s3://{bucket}/", env={"AWS_ENDPOINT_URL": endpoint})
    assert p.returncode == 1
    no_query_secrets(p)
    p = ferry.run("cat", f"https://user:{SIG}@example.invalid/f")
    assert p.returncode == 2
    no_query_secrets(p)


def test_manifest_command_is_redacted(ferry, tmp_path, prefix, s3, bucket):
    out = tmp_path / "o"
    out.mkdir()
    p = ferry.run("run", "--out", f"{out}={prefix}", "--", "true", f"--password={SIG}",
                  f"https://u:{SIG}@h/x?sig={SIG}", f"--token={SIG}", timeout=60)
    assert p.returncode == 0, p.stderr
    no_query_secrets(p)
    manifest = all_objects(s3, bucket, prefix)["_ferry/manifest.json"].decode()
    assert SIG not in manifest
    assert "true" in manifest


@pytest.mark.parametrize("typo", ["s3:/b/typo/", "s3:b/typo", "S3:/b/x", "https:/h/x", "file:rel"])
def test_scheme_typos_are_usage_errors_not_local_paths(ferry, tmp_path, typo):
    os.chdir(tmp_path)
    src = tmp_path / "f"
    src.write_bytes(b"1")
    p = ferry.run("cp", src, typo)
    assert p.returncode == 2, p.stderr
    assert b"malformed URL" in p.stderr
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    p = ferry.run("run", "--out", f"{out}={typo}", "--", "true")
    assert p.returncode == 2, p.stderr
    assert not any(tmp_path.glob("s3:*")) and not any(tmp_path.glob("S3:*"))
    assert not any(tmp_path.glob("https:*")) and not any(tmp_path.glob("file:*"))


def test_swapped_out_is_a_usage_error(ferry, tmp_path, prefix):
    os.chdir(tmp_path)
    p = ferry.run("run", "--out", f"{prefix}={tmp_path}/o", "--", "true")
    assert p.returncode == 2
    assert b"must be a local directory" in p.stderr
    assert not (tmp_path / "s3:").exists()


def test_users_ferry_tmp_files_are_copied(ferry, tmp_path):
    src = tmp_path / "src"
    make_tree(src, {".ferry-tmp.notes": b"mine", "a": b"1",
                    ".ferry-tmp.x.0123456789abcdef-00000000": b"mine too"})
    p = ferry.run("cp", "-r", src, tmp_path / "dst")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "dst" / ".ferry-tmp.notes").read_bytes() == b"mine"
    assert (tmp_path / "dst" / ".ferry-tmp.x.0123456789abcdef-00000000").exists()


def test_discarded_journal_leaves_no_temp_file(ferry, prefix, s3, bucket, tmp_path, ferry_bin, rgw):
    """kill -9 during a large download, replace the source, run again: the new file is right and
    the old run's temporary file is gone."""
    from conftest import base_env, wait_for
    key = prefix.split(f"s3://{bucket}/", 1)[1] + "big.bin"
    v1 = os.urandom(64 << 20)
    s3.put_object(Bucket=bucket, Key=key, Body=v1)
    dst = tmp_path / "dl"
    dst.mkdir()
    env = base_env(rgw, FERRY_STATE_DIR=str(tmp_path / "state"))
    proc = subprocess.Popen([ferry_bin, "cp", "--bwlimit", "20M", "--no-progress",
                             f"s3://{bucket}/{key}", f"{dst}/"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Killed once the download is under way: its journal written (naming the temporary file,
    # which exists by then), not after a fixed 1.5 s that a loaded machine can spend starting.
    journals = tmp_path / "state" / "transfers"
    wait_for(lambda: proc.poll() is not None or
             any("\n" in j.read_text() for j in journals.glob("*.journal")), "the download's journal")
    proc.kill()
    proc.wait()
    temps = [f.name for f in dst.iterdir()]
    assert len(temps) == 1 and temps[0].startswith(".ferry-tmp."), temps
    v2 = os.urandom(40 << 20)
    s3.put_object(Bucket=bucket, Key=key, Body=v2)
    p = subprocess.run([ferry_bin, "cp", "--no-progress", f"s3://{bucket}/{key}", f"{dst}/"],
                       env=env, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert [f.name for f in dst.iterdir()] == ["big.bin"]
    assert (dst / "big.bin").read_bytes() == v2
    s3.delete_object(Bucket=bucket, Key=key)


def test_runtime_failures_exit_1_with_their_cause(ferry, prefix, s3, bucket, tmp_path):
    key_prefix = prefix.split(f"s3://{bucket}/", 1)[1]
    # A key a local disk cannot hold (a 300-byte name) and one that climbs out ("../x").
    s3.put_object(Bucket=bucket, Key=key_prefix + "n" * 300, Body=b"1")
    s3.put_object(Bucket=bucket, Key=key_prefix + "../escape", Body=b"1")
    s3.put_object(Bucket=bucket, Key=key_prefix + "ok", Body=b"1")
    p = ferry.run("cp", "-r", "--json", prefix, tmp_path / "dl")
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    assert report["ok"] is False and len(report["errors"]) == 2
    assert (tmp_path / "dl" / "ok").exists()
    assert not (tmp_path / "escape").exists()
    # A listing that fails outright still names its cause in --json.
    p = ferry.run("cp", "-r", "--json", "s3://no-such-bucket-ferry/x/", tmp_path / "dl2")
    assert p.returncode == 1
    report = json.loads(p.stdout)
    assert report["ok"] is False and report["errors"] and "NoSuchBucket" in report["errors"][0]
    # A key S3 cannot hold (over 1024 bytes): refused before any request, as a malformed URL. (A
    # NUL byte, the other such key, cannot be passed in argv; S3 keys are literal, so "%00" is
    # three characters of a key, not a NUL.)
    p = ferry.run("cat", f"s3://{bucket}/" + "k" * 1025)
    assert p.returncode == 2 and b"at most 1024 bytes" in p.stderr
    p = ferry.run("cat", f"s3://{bucket}/a%00b")
    assert p.returncode == 1 and b"'s3://" + bucket.encode() + b"/a%00b'" in p.stderr


def test_zero_byte_objects_are_verified(ferry, prefix, s3, bucket, tmp_path):
    key_prefix = prefix.split(f"s3://{bucket}/", 1)[1]
    s3.put_object(Bucket=bucket, Key=key_prefix + "empty", Body=b"")  # another tool: no checksum
    p = ferry.run("cp", "-r", "--json", prefix, tmp_path / "dl")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["verified"] == 1 and report["unverified"] == 0
    assert (tmp_path / "dl" / "empty").read_bytes() == b""


def test_shard_ls_of_an_index_url_with_a_query(ferry, web, tmp_path):
    root, base = web
    src = tmp_path / "samples"
    make_tree(src, {f"{i:03d}.txt": b"x" * 10 for i in range(5)})
    p = ferry.run("shard", "pack", src, f"{root}/ds/train", "--samples-per-shard", "2")
    assert p.returncode == 0, p.stderr
    QueryBlindHandler.targets.clear()
    p = ferry.run("shard", "ls", f"{base}/ds/train.index.json?token={SIG}")
    assert p.returncode == 0, p.stderr
    assert b"train-000000.tar" in p.stdout
    no_query_secrets(p)
    # The query stays the query: nothing is appended after it.
    assert QueryBlindHandler.targets == [f"/ds/train.index.json?token={SIG}"]


def test_a_downloaded_file_rewritten_in_place_uploads(ferry, prefix, tmp_path):
    # ferry records a downloaded file's CRC32C in an xattr; a program that rewrites the file in
    # place keeps the xattr. The upload must trust the bytes, not the stale xattr.
    (tmp_path / "src").write_bytes(b"0\n")
    ferry.run("cp", tmp_path / "src", prefix + "a", check=True)
    local = tmp_path / "local"
    ferry.run("cp", prefix + "a", local, check=True)
    with open(local, "r+b") as f:
        f.write(b"3")
    p = ferry.run("cp", local, prefix + "b")
    assert p.returncode == 0, p.stderr.decode()
    assert ferry.run("cat", prefix + "b", check=True).stdout == b"3\n"
    ferry.run("rm", "-r", "-q", prefix)
