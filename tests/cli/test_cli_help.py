"""The CLI helps a user who gets something wrong (issue 16), driven as a user would: misspelt
flags, a command without `--` in `ferry run`, `cp -R`, `stat` of a prefix, a copy into a bucket
that does not exist, a backend that stops answering, and the `--json` outputs of `auth`,
`shard verify` and `run` with run's summary lines."""
import json
import os
import subprocess
import threading
import time

import pytest

from conftest import base_env, one_line_error


@pytest.mark.parametrize("args, flag, hint", [
    (["run", "--intervall", "10", "--", "true"], "--intervall", "--interval"),
    (["cp", "--recursiv", "a", "b"], "--recursiv", "--recursive"),
    (["ls", "--jsno", "x"], "--jsno", "--json"),
    (["shard", "verify", "--jsn", "x"], "--jsn", "--json"),
    (["cp", "--transfer", "4", "a", "b"], "--transfer", "--transfers"),
])
def test_a_misspelt_flag_is_named_with_the_nearest_one(ferry, args, flag, hint):
    p = ferry.run(*args)
    assert p.returncode == 2
    err = one_line_error(p)
    cmd = "ferry " + " ".join(a for a in args[:2] if a in ("run", "cp", "ls", "shard", "verify"))
    assert f"unknown flag '{flag}' for {cmd}; did you mean '{hint}'?" in err, err
    assert "not expected" not in err, err


def test_an_unknown_flag_without_a_near_one_is_named(ferry):
    err = one_line_error(ferry.run("stat", "--frobnicate-everything", "x"))
    assert "unknown flag '--frobnicate-everything' for ferry stat (see ferry stat --help)" in err


def test_run_without_double_dash_explains_it(ferry, tmp_path):
    p = ferry.run("run", "--out", f"{tmp_path}/out={tmp_path}/dst/", "python3", "-u", "train.py")
    assert p.returncode == 2
    err = one_line_error(p)
    assert "'-u' is not a flag of ferry run" in err, err
    assert "put '--' before the command: ferry run [FLAGS] -- python3 ..." in err, err


def test_flags_after_double_dash_belong_to_the_command(ferry, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    p = ferry.run("run", "--out", f"{out}={tmp_path}/dst/", "--", "sh", "-c", "echo hi --intervall")
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout == b"hi --intervall\n"


def test_cp_capital_r_copies_a_tree_like_r(ferry, tmp_path):
    for name in ("a/1.txt", "a/b/2.txt"):
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_text(name)
    p = ferry.run("cp", "-R", tmp_path / "src", f"{tmp_path}/dst/")
    assert p.returncode == 0, p.stderr.decode()
    assert (tmp_path / "dst/a/b/2.txt").read_text() == "a/b/2.txt"


def test_stat_of_a_prefix_without_slash_suggests_it(ferry, prefix, tmp_path):
    (tmp_path / "f").write_text("x")
    ferry.run("cp", tmp_path / "f", prefix + "dir/f", check=True)
    p = ferry.run("stat", prefix + "dir")
    assert p.returncode == 1
    err = one_line_error(p)
    assert f"'{prefix}dir' is not an object but a prefix" in err, err
    assert f"'ferry ls {prefix}dir/'" in err, err
    assert ferry.run("stat", prefix + "dir/f").returncode == 0
    # A key that is neither an object nor a prefix stays a plain "not found".
    err = one_line_error(ferry.run("stat", prefix + "nothing"))
    assert "not an object but a prefix" not in err


def test_cp_into_a_missing_bucket_stops_at_the_first_error(ferry, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(300):
        (src / f"{i:04d}.txt").write_text(str(i))
    p = ferry.run("cp", "-r", "--json", src, "s3://ferry-no-such-bucket-16/x/", timeout=120)
    assert p.returncode == 1
    summary = json.loads(p.stdout)
    assert summary["failed"] <= 32 and summary["files"] == 300, summary   # those in flight at most
    err = one_line_error(p)
    assert "stopped at the first error, which every other object would meet too" in err, err
    assert "NoSuchBucket" in err and "not tried" in err, err


def read_lines_until(proc, needle, seconds):
    """stderr lines of a running process until one contains `needle` (or the time is up)."""
    lines, found = [], threading.Event()

    def pump():
        for raw in proc.stderr:
            line = raw.decode(errors="replace")
            lines.append((time.monotonic(), line))
            if needle in line:
                found.set()

    threading.Thread(target=pump, daemon=True).start()
    found.wait(seconds)
    return lines


@pytest.mark.parametrize("command, what", [
    (["cp", "-r", "--no-progress", "SRC", "PREFIX"], "copying"),   # or the listing, at first
    (["ls", "PREFIX"], "ls 's3://"),
    (["stat", "PREFIX0.bin"], "stat 's3://"),
])
def test_a_backend_that_stops_answering_is_named_within_seconds(ferry, rgw, prefix, tmp_path,
                                                                   fault_proxy, command, what):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(5):
        (src / f"{i}.bin").write_bytes(os.urandom(1000))
    ferry.run("cp", src / "0.bin", prefix + "0.bin", check=True)
    args = [a.replace("SRC", str(src)).replace("PREFIX", prefix) for a in command]
    # Every byte the client sends is held for 10 minutes: the server never sees a request.
    with fault_proxy("--trickle-after-up", "0", "--stall-ms", "600000", "--faults", "1000") as proxy:
        env = base_env(rgw, AWS_ENDPOINT_URL=proxy.endpoint)
        start = time.monotonic()
        proc = subprocess.Popen([ferry.binary, *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            lines = read_lines_until(proc, "waiting on", 25)
        finally:
            proc.kill()
            proc.wait()
    notices = [(t, line) for t, line in lines if "waiting on" in line]
    assert notices, "no notice; stderr: " + "".join(line for _, line in lines)
    t, line = notices[0]
    assert t - start < 20, f"the first notice came after {t - start:.1f} s"
    assert f"waiting on '{proxy.endpoint}': no progress for 1" in line, line   # 10 s (or 11)
    assert "retries so far" in line and (what in line or "listing" in line), line


def test_auth_json(ferry, rgw, bucket):
    p = ferry.run("auth", "--json", f"s3://{bucket}/")
    assert p.returncode == 0, p.stderr.decode()
    j = json.loads(p.stdout)
    assert j["endpoint"] == rgw["FERRY_TEST_S3_ENDPOINT"] and j["check"] == "ok", j
    assert j["credentials"]["source"] and rgw["FERRY_TEST_S3_SECRET_KEY"] not in p.stdout.decode()
    j = json.loads(ferry.run("auth", "--json", "--no-check", f"s3://{bucket}/", check=True).stdout)
    assert j["check"] == "skipped"
    p = ferry.run("auth", "--json", f"s3://{bucket}/", env={"AWS_SECRET_ACCESS_KEY": "wrong"})
    assert p.returncode == 1 and b"access check failed" in p.stderr


def test_shard_verify_json(ferry, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(6):
        (src / f"{i:03d}.txt").write_text("x" * (i + 1))
    ds = tmp_path / "ds"
    ferry.run("shard", "pack", src, ds / "train", "--samples-per-shard", "3", check=True)
    j = json.loads(ferry.run("shard", "verify", "--json", ds / "train", check=True).stdout)
    assert (j["ok"], j["shards"], j["samples"], j["problems"]) == (True, 2, 6, []), j
    shard = ds / "train-000001.tar"
    data = bytearray(shard.read_bytes())
    data[600] ^= 0xFF
    shard.write_bytes(bytes(data))
    p = ferry.run("shard", "verify", "--json", ds / "train")
    assert p.returncode == 1
    j = json.loads(p.stdout)
    assert j["ok"] is False and len(j["problems"]) == 1 and "train-000001.tar" in j["problems"][0], j


def test_run_prints_one_summary_line_per_stage_in_and_sync(ferry, tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    (data / "in.txt").write_text("in")
    p = ferry.run("run", "--in", f"{data}/={tmp_path}/staged", "--out", f"{out}={tmp_path}/dst/",
                  "--", "sh", "-c", f"cp {tmp_path}/staged/in.txt {out}/ckpt.txt")
    assert p.returncode == 0, p.stderr.decode()
    err = p.stderr.decode()
    assert f"ferry: staged in '{data}/' -> '{tmp_path}/staged': 1 file(s) copied (2 B), 0 unchanged" in err, err
    assert f"ferry: final sync '{out}' -> '{tmp_path}/dst/': 1 file(s) uploaded (2 B), 0 unchanged" in err, err
    assert len(err.splitlines()) == 2, err


def test_run_json_prints_events_and_the_end_on_stderr(ferry, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    p = ferry.run("run", "--json", "--out", f"{out}={tmp_path}/dst/", "--",
                  "sh", "-c", f"echo result; echo w > {out}/w.txt; exit 3")
    assert p.returncode == 3
    assert p.stdout == b"result\n"   # the command's own output, untouched
    events = [json.loads(line) for line in p.stderr.decode().splitlines()]
    assert [e["event"] for e in events] == ["sync", "end"], events
    sync, end = events
    assert (sync["sync"], sync["src"], sync["files_copied"], sync["ok"]) == ("final", str(out), 1, True)
    assert (end["exit_code"], end["ok"]) == (3, False), end
