"""Preemption end to end: a real PyTorch training script (examples/train_resume.py) under
`ferry run --resume` on RGW is stopped mid-epoch, started again on a "new machine" (an empty
scratch directory, no scheduler variables) and finishes with exactly the samples, in exactly the
order, and exactly the weights of an uninterrupted run."""
import json
import os
import signal
import subprocess
import uuid

import pytest

from conftest import python_env
from training import SCRIPT, pack_dataset, read, reference, wait_for_checkpoint


@pytest.fixture(scope="module")
def dataset(ferry, rgw, tmp_path_factory):
    """240 samples in 12 shards on RGW."""
    url = f"s3://{rgw['FERRY_TEST_S3_BUCKET']}/resume-ds-{uuid.uuid4().hex[:8]}/train"
    pack_dataset(ferry, tmp_path_factory.mktemp("samples") / "src", url)
    yield url
    ferry.run("rm", "-r", url.rsplit("/", 1)[0] + "/")


def train_args(dataset, workers, *extra):
    args = ["--data", dataset, "--epochs", "2", "--batch-size", "8", "--checkpoint-every", "5"]
    if workers:
        args += ["--workers", str(workers), "--persistent-workers"]
    return args + list(extra)


def ferry_run(ferry, scratch, dst, job, dataset, workers, *extra):
    cmd = [ferry.binary, "-v", "run", "--resume", scratch, "--out", f"{scratch}={dst}",
           "--interval", "3600", "--grace", "20", "--",
           "/usr/bin/python3", SCRIPT, *train_args(dataset, workers, *extra)]
    env = python_env(ferry.rgw, FERRY_RUN_ID=job)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("workers,catch", [(0, False), (2, False), (2, True)],
                         ids=["workers0", "workers2-persistent", "workers2-persistent-saves-on-sigterm"])
def test_preempted_training_resumes_exactly(ferry, rgw, prefix, tmp_path, dataset, workers, catch):
    want = reference(rgw, tmp_path / "reference", train_args(dataset, workers))
    dst = prefix + "runs/{job}/{attempt}/"
    extra = ["--step-seconds", "0.15"] + (["--catch-sigterm"] if catch else [])

    # Attempt 0: stopped (SIGTERM, as Kubernetes or Slurm would) once a checkpoint has been
    # uploaded, mid-epoch.
    first = ferry_run(ferry, tmp_path / "node1" / "ckpt", dst, "job-a", dataset, workers, *extra)
    wait_for_checkpoint(ferry, prefix + "runs/job-a/0/_ferry/manifest.json",
                        lambda: first.poll() is None)
    first.send_signal(signal.SIGTERM)
    out, err = first.communicate(timeout=120)
    assert "resumed" not in err and "nothing to resume" in err, err
    if catch:
        assert first.returncode == 0, err  # saved and exited by itself within the grace period
        assert "checkpoint saved" in err and "killed by signal" not in err, err
    else:
        assert first.returncode == 128 + signal.SIGTERM, err
    final = json.loads(read(ferry, prefix + "runs/job-a/0/_ferry/manifest.json"))
    assert final["final"] and final["state"] == "interrupted" and final["attempt"] == "0"
    assert final["resumed_from"] is None
    assert {f["path"] for f in final["files"]} == {"ckpt.pt"}
    assert all(f["crc32c"] for f in final["files"])
    pointer = json.loads(read(ferry, prefix + "runs/job-a/_ferry/latest.json"))
    assert pointer["state"] == "interrupted" and pointer["exit_code"] == first.returncode

    # Attempt 1 on another machine: nothing local, no SLURM_RESTART_COUNT: ferry counts and resumes.
    second = ferry_run(ferry, tmp_path / "node2" / "ckpt", dst, "job-a", dataset, workers)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    assert "resumed from attempt 0" in err, err
    got = read(ferry, prefix + "runs/job-a/1/result.txt")
    assert got == want, "the resumed run saw other samples or reached other weights than an uninterrupted one"
    m = json.loads(read(ferry, prefix + "runs/job-a/1/_ferry/manifest.json"))
    assert m["attempt"] == "1" and m["state"] == "succeeded"
    assert m["resumed_from"]["attempt"] == "0"
    assert m["resumed_from"]["manifest"] == prefix + "runs/job-a/0/_ferry/manifest.json"
    assert {f["path"] for f in m["files"]} == {"ckpt.pt", "result.txt"}
    ferry.run("rm", "-r", prefix)


def test_jobs_never_resume_each_others_checkpoints(ferry, prefix, tmp_path):
    dst = prefix + "runs/{job}/{attempt}/"
    script = ('test "$FERRY_RESUMED" = 0 || { echo "resumed $FERRY_RESUME_MANIFEST" >&2; exit 9; }; '
              'echo "$FERRY_RUN_ID $FERRY_ATTEMPT" > $FERRY_OUTPUT/ckpt.pt')
    for job in ("job-a", "job-b"):
        p = ferry.run("run", "--resume", tmp_path / job, "--out", f"{tmp_path / job}={dst}", "--",
                      "bash", "-c", script, env={"FERRY_RUN_ID": job})
        assert p.returncode == 0, p.stderr.decode()
    # job-a again: it resumes its own set, attempt 1, never job-b's.
    again = tmp_path / "again"
    p = ferry.run("run", "--resume", again, "--out", f"{again}={dst}", "--", "bash", "-c",
                  'echo "$FERRY_ATTEMPT $FERRY_RESUME_ATTEMPT $(cat $FERRY_RESUME_DIR/ckpt.pt)" > $FERRY_OUTPUT/seen',
                  env={"FERRY_RUN_ID": "job-a"})
    assert p.returncode == 0, p.stderr.decode()
    assert read(ferry, prefix + "runs/job-a/1/seen") == "1 0 job-a 0\n"


def test_a_damaged_checkpoint_is_never_resumed(ferry, prefix, tmp_path):
    dst = prefix + "runs/{job}/{attempt}/"
    p = ferry.run("run", "--out", f"{tmp_path / 'a'}={dst}", "--", "bash", "-c",
                  "echo weights > $FERRY_OUTPUT/ckpt.pt", env={"FERRY_RUN_ID": "job-d"})
    assert p.returncode == 0, p.stderr.decode()
    # Someone overwrites the uploaded checkpoint with other bytes of the same size.
    (tmp_path / "evil").write_text("WEIGHTS\n")
    ferry.run("cp", tmp_path / "evil", prefix + "runs/job-d/0/ckpt.pt", check=True)
    marker = tmp_path / "started"
    p = ferry.run("run", "--resume", tmp_path / "b", "--out", f"{tmp_path / 'b'}={dst}", "--",
                  "touch", marker, env={"FERRY_RUN_ID": "job-d"})
    err = p.stderr.decode()
    assert p.returncode == 1 and "CRC32C" in err and "ckpt.pt" in err, err
    assert not marker.exists()


def test_resume_mistakes_are_usage_errors(ferry, prefix, tmp_path):
    p = ferry.run("run", "--resume", tmp_path / "r", "--", "true")
    assert p.returncode == 2 and b"--resume" in p.stderr and b"--out" in p.stderr
    p = ferry.run("run", "--resume", prefix + "x/", "--out", f"{tmp_path}/o={prefix}", "--", "true")
    assert p.returncode == 2 and b"must be a local directory" in p.stderr


def test_two_pods_of_one_job_starting_together_get_different_attempts(ferry, prefix, tmp_path):
    dst = prefix + "runs/{job}/{attempt}/"
    procs = []
    for i in range(4):
        out = tmp_path / f"pod{i}"
        procs.append(subprocess.Popen(
            [ferry.binary, "run", "--resume", out, "--out", f"{out}={dst}", "--", "bash", "-c",
             "echo $FERRY_ATTEMPT > $FERRY_OUTPUT/attempt"],
            env=python_env(ferry.rgw, FERRY_RUN_ID="job-r"), stderr=subprocess.PIPE))
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read().decode()
    attempts = sorted(int((tmp_path / f"pod{i}" / "attempt").read_text()) for i in range(4))
    assert len(set(attempts)) == 4, attempts  # never two pods in one destination
    for a in attempts:
        assert read(ferry, f"{prefix}runs/job-r/{a}/attempt") == f"{a}\n"


def test_a_set_of_many_files_comes_back_whole(ferry, prefix, tmp_path):
    dst = prefix + "runs/{job}/{attempt}/"
    script = ("mkdir -p $FERRY_OUTPUT/shards/a $FERRY_OUTPUT/shards/b; "
              "for i in 0 1 2 3 4 5 6 7 8 9; do head -c $((i * 1000 + 1)) /dev/urandom > "
              "$FERRY_OUTPUT/shards/$([ $i -lt 5 ] && echo a || echo b)/part-$i.pt; done; "
              "head -c 40000000 /dev/urandom > $FERRY_OUTPUT/model.pt")
    p = ferry.run("run", "--out", f"{tmp_path / 'a'}={dst}", "--", "bash", "-c", script,
                  env={"FERRY_RUN_ID": "job-m"})
    assert p.returncode == 0, p.stderr.decode()
    b = tmp_path / "b"
    p = ferry.run("run", "--resume", b, "--out", f"{b}={dst}", "--", "true", env={"FERRY_RUN_ID": "job-m"})
    assert p.returncode == 0, p.stderr.decode()
    got = sorted(str(f.relative_to(b)) for f in b.rglob("*") if f.is_file())
    want = sorted(str(f.relative_to(tmp_path / "a")) for f in (tmp_path / "a").rglob("*") if f.is_file())
    assert got == want and len(got) == 11
    for rel in got:
        assert (b / rel).read_bytes() == (tmp_path / "a" / rel).read_bytes(), rel
    # One damaged file among many: named, and the command does not start.
    (tmp_path / "evil").write_bytes(b"x" * 5001)
    ferry.run("cp", tmp_path / "evil", prefix + "runs/job-m/1/shards/b/part-5.pt", check=True)
    c = tmp_path / "c"
    p = ferry.run("run", "--resume", c, "--out", f"{c}={dst}", "--", "touch", tmp_path / "started",
                  env={"FERRY_RUN_ID": "job-m"})
    err = p.stderr.decode()
    assert p.returncode == 1 and "part-5.pt" in err and "CRC32C" in err, err
    assert not (tmp_path / "started").exists()


def test_names_that_are_not_utf8_are_staged_out_and_resumed(ferry, tmp_path):
    """A checkpoint named in Latin-1 and such a command argument, on a NAS path: ferry run used to
    abort (nlohmann's JSON text must be UTF-8) before its stage-out. The manifest keeps the exact
    name (path_bytes) and the resume brings the file back under it, byte for byte."""
    name = os.fsdecode(b"ckpt-\xe9t\xe9.pt")  # bytes through argv as they are
    dst = f"{tmp_path / 'nas'}/runs/{{job}}/{{attempt}}/"
    a, b = tmp_path / "a", tmp_path / "b"
    p = ferry.run("run", "--out", f"{a}={dst}", "--", "bash", "-c",
                  'printf "weights %s" "$1" > "$FERRY_OUTPUT/$1"', "sh", name,
                  env={"FERRY_RUN_ID": "job-u"})
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    stored = tmp_path / "nas" / "runs" / "job-u" / "0"
    assert (stored / name).read_bytes() == b"weights ckpt-\xe9t\xe9.pt"
    manifest = json.loads((stored / "_ferry" / "manifest.json").read_text())
    assert manifest["files"][0]["path"] == "ckpt-\ufffdt\ufffd.pt"
    assert manifest["files"][0]["path_bytes"] == "ckpt-%E9t%E9.pt"
    p = ferry.run("run", "--resume", b, "--out", f"{b}={dst}", "--", "true",
                  env={"FERRY_RUN_ID": "job-u"})
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert os.listdir(b) == [name] and (b / name).read_bytes() == b"weights ckpt-\xe9t\xe9.pt"


def test_resume_without_a_stable_job_id_says_so_and_job_names_the_job(ferry, tmp_path):
    """Outside Slurm/TorchElastic with no FERRY_RUN_ID every start is a new generated job: --resume
    would silently start over. It says so in one line (and in --json), and --job NAME gives the
    job an identity that the next start resumes (issue 33)."""
    dst = f"{tmp_path}/dst/{{job}}/{{attempt}}/"
    save = 'echo "$FERRY_RESUMED $FERRY_ATTEMPT" > $FERRY_OUTPUT/ckpt.pt'
    p = ferry.run("run", "--resume", tmp_path / "a", "--out", f"{tmp_path / 'a'}={dst}", "--",
                  "bash", "-c", save)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    lines = [line for line in err.splitlines() if "--resume without a stable job id" in line]
    assert len(lines) == 1 and "(generated)" in lines[0] and "--job NAME" in lines[0], err
    p = ferry.run("run", "--json", "--resume", tmp_path / "b", "--out", f"{tmp_path / 'b'}={dst}",
                  "--", "true")
    assert p.returncode == 0
    assert b"--resume without a stable job id" in p.stdout + p.stderr
    # --strict makes it fatal, before the command runs.
    p = ferry.run("run", "--strict", "--resume", tmp_path / "c", "--out", f"{tmp_path / 'c'}={dst}",
                  "--", "touch", tmp_path / "ran")
    assert p.returncode == 1 and not (tmp_path / "ran").exists()

    # --job: the second start resumes the first's checkpoint, and nothing is said.
    for attempt in (0, 1):
        d = tmp_path / f"job{attempt}"
        p = ferry.run("run", "--job", "bert-pretrain", "--resume", d, "--out", f"{d}={dst}", "--",
                      "bash", "-c", save)
        assert p.returncode == 0, p.stderr.decode()
        assert b"stable job id" not in p.stderr
    assert (tmp_path / "dst/bert-pretrain/1/ckpt.pt").read_text() == "1 1\n"
    p = ferry.run("run", "--job", "a/b", "--out", f"{tmp_path / 'e'}={dst}", "--", "true")
    assert p.returncode == 2 and b"--job 'a/b'" in p.stderr
