"""examples/slurm.sbatch as written, on a real single-node Slurm (tests/tools/slurm.sh): the job
trains examples/train_resume.py under `ferry run --resume` on RGW, is requeued with
`scontrol requeue` once a checkpoint is uploaded, comes back as SLURM_RESTART_COUNT=1 on a node
whose scratch is empty, and finishes with exactly the result of an uninterrupted run.

What Slurm does on `scontrol requeue` of a running batch job (22.05, measured here): slurmstepd
prints `*** JOB N ON node CANCELLED AT ... DUE TO JOB REQUEUE ***`, sends SIGTERM to
*every* process of the job (the batch shell, which the script replaced with ferry, and
train_resume.py too), and SIGKILL to what is left KillWait (30) seconds later. The job is then
PENDING (reason BeginTime) for AuthInfo's cred_expire (120 s by default, 10 s in slurm.sh) and
starts again with the same SLURM_JOB_ID, SLURM_RESTART_COUNT=1, appending to the same output.
"""
import os
import shutil
import subprocess
import time

import pytest

from conftest import ROOT, python_env
from training import (SCRIPT, env_without, log_tail, node_bin, pack_dataset, read, read_json,
                      reference, wait_for_checkpoint)

SBATCH = ROOT / "examples/slurm.sbatch"
SBATCH_ARRAY = ROOT / "examples/slurm-array.sbatch"
SLURM_SH = ROOT / "tests/tools/slurm.sh"
SLURM_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
MISSING = [b for b in ("sbatch", "scontrol", "slurmctld", "slurmd", "munged")
           if not shutil.which(b, path=SLURM_PATH)]

pytestmark = pytest.mark.skipif(
    bool(MISSING) or os.geteuid() != 0,
    reason=f"Slurm is not installed ({', '.join(MISSING)} missing; scripts/install-deps.sh "
           "installs slurm-wlm and munge)" if MISSING else "slurmd needs root")

TRAIN_ARGS = ["--epochs", "2", "--batch-size", "8", "--checkpoint-every", "5"]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A running single-node cluster; its environment (SLURM_CONF)."""
    d = tmp_path_factory.mktemp("slurm")
    env = dict(os.environ, PATH=SLURM_PATH)
    p = subprocess.run([SLURM_SH, "start", d], env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        subprocess.run([SLURM_SH, "stop", d], env=env, timeout=120)
        pytest.fail(f"tests/tools/slurm.sh start failed: {p.stdout}{p.stderr}")
    cluster = dict(line.strip().split("=", 1) for line in open(d / "env") if "=" in line)
    yield cluster
    subprocess.run([SLURM_SH, "stop", d], env=env, timeout=120)


class Job:
    """examples/slurm.sbatch submitted as written, from a user's environment (--export=ALL):
    the script's variables that say to override them, credentials in a credentials file for
    AWS_PROFILE's default `training` (never argv), `ferry` and a PyTorch python3 in PATH, node-local
    scratch under TMPDIR. Command-line options override the #SBATCH lines: this node has no GPU."""

    def __init__(self, ferry, rgw, slurm, prefix, tmp_path, train_args, *sbatch_options,
                 script=SBATCH, runs="runs/resnet", log="slurm.out"):
        self.ferry, self.slurm, self.tmp_path = ferry, slurm, tmp_path
        self.data = prefix + "datasets/imagenet-shards/train"
        pack_dataset(ferry, tmp_path / "samples", self.data)
        self.runs = prefix + runs
        credentials = tmp_path / "aws-credentials"
        credentials.write_text(f"[training]\naws_access_key_id = {rgw['FERRY_TEST_S3_ACCESS_KEY']}\n"
                               f"aws_secret_access_key = {rgw['FERRY_TEST_S3_SECRET_KEY']}\n")
        self.env = env_without(python_env(rgw), "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
        self.env.update(slurm, AWS_SHARED_CREDENTIALS_FILE=str(credentials), DATA=self.data,
                        RUNS=self.runs, TRAIN=str(SCRIPT), TRAIN_ARGS=" ".join(train_args),
                        TMPDIR=str(tmp_path / "node"))
        self.env["PATH"] = os.pathsep.join([str(node_bin(tmp_path / "bin", ferry.binary)),
                                            SLURM_PATH])
        (tmp_path / "node").mkdir()
        self.log = tmp_path / log
        p = subprocess.run(["sbatch", "--parsable", "--export=ALL", "--gres=none", *sbatch_options,
                            f"--output={self.log}", f"--chdir={tmp_path}", script], env=self.env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        self.id = p.stdout.strip().split(";")[0]
        self.submitted = time.time()

    def url(self, attempt, path):
        return f"{self.runs}/{self.id}/{attempt}/{path}"

    def info(self):
        """scontrol's fields of the job (JobState, Reason, Restarts, ExitCode, ...)."""
        p = subprocess.run(["scontrol", "show", "job", "-o", self.id], env=self.env,
                           capture_output=True, text=True, timeout=30, check=True)
        return dict(f.split("=", 1) for f in p.stdout.split() if "=" in f)

    def wait_for(self, states, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            info = self.info()
            if info["JobState"] in states:
                return info
            time.sleep(0.2)
        raise AssertionError(f"job {self.id} is {info['JobState']} ({info['Reason']}), not one "
                             f"of {states}, after {timeout} s; its output:\n{self.output()}")

    def wait_for_end(self, timeout):
        return self.wait_for(("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                              "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE"), timeout)

    def output(self):
        return log_tail(self.log, 100000)

    def cancel(self):
        subprocess.run(["scancel", self.id], env=self.env, timeout=30)


def test_requeued_slurm_job_resumes(ferry, rgw, slurm, prefix, tmp_path):
    try:
        job = Job(ferry, rgw, slurm, prefix, tmp_path, TRAIN_ARGS + ["--step-seconds", "0.2"])
        try:
            requeue_after_first_checkpoint(job)
        finally:
            job.cancel()
        want = reference(rgw, tmp_path / "reference", ["--data", job.data, *TRAIN_ARGS])
        check_resumed(job, want)
    finally:
        ferry.run("rm", "-r", prefix)


def requeue_after_first_checkpoint(job):
    wait_for_checkpoint(job.ferry, job.url(0, "_ferry/manifest.json"),
                        lambda: job.info()["JobState"] in ("PENDING", "RUNNING"))
    assert job.info()["JobState"] == "RUNNING", job.output()
    subprocess.run(["scontrol", "requeue", job.id], env=job.env, check=True, timeout=30)
    # Slurm stops every process of the job, then holds it until its BeginTime: the moment to
    # make this "another node" whose scratch holds nothing of attempt 0.
    info = job.wait_for(("PENDING",), 60)
    assert info["Reason"] == "BeginTime", info
    shutil.rmtree(job.tmp_path / "node" / job.id)
    job.wait_for_end(180)


def check_resumed(job, want):
    info, out, ferry = job.info(), job.output(), job.ferry
    assert info["JobState"] == "COMPLETED" and info["ExitCode"] == "0:0", out
    assert info["Restarts"] == "1", info
    assert "DUE TO JOB REQUEUE" in out, out
    assert out.count("resumed from attempt") == 1 and "resumed from attempt 0" in out, out

    first = job.url(0, "_ferry/manifest.json")
    m0 = read_json(ferry, first)
    assert m0["attempt"] == "0" and m0["final"] and m0["state"] == "interrupted", m0
    assert m0["run_id"] == job.id and m0["resumed_from"] is None
    m1 = read_json(ferry, job.url(1, "_ferry/manifest.json"))
    assert m1["attempt"] == "1" and m1["final"] and m1["state"] == "succeeded", m1
    assert m1["resumed_from"]["attempt"] == "0" and m1["resumed_from"]["manifest"] == first
    assert {f["path"] for f in m1["files"]} == {"ckpt.pt", "result.txt"}
    assert read(ferry, job.url(1, "result.txt")) == want, \
        "the requeued job saw other samples or reached other weights than an uninterrupted run"
    latest = read_json(ferry, f"{job.runs}/{job.id}/_ferry/latest.json")
    assert latest["attempt"] == "1" and latest["state"] == "succeeded", latest
    assert latest["exit_code"] == 0 and latest["final"], latest


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("FERRY_SLOW"), reason="slow: set FERRY_SLOW=1 (ctest -L slow)")
def test_early_signal_reaches_ferry_before_the_time_limit(ferry, rgw, slurm, prefix, tmp_path):
    """`#SBATCH --signal=B:TERM@300` as written: with a 1-minute limit (--time=1 overrides the
    script's 24 hours) the signal is due at once, and Slurm sends it to the batch shell, which is
    ferry, within its event resolution (here 15-30 s after the start). ferry passes it on,
    uploads the checkpoint and exits 143 long before the limit: the job is FAILED, not TIMEOUT.
    (Without `B:` nothing is signalled: the script has no srun steps, and the job runs into its
    limit.)"""
    try:
        job = Job(ferry, rgw, slurm, prefix, tmp_path, TRAIN_ARGS + ["--step-seconds", "2"],
                  "--time=1")
        try:
            info = job.wait_for_end(150)
        finally:
            job.cancel()
        elapsed = time.time() - job.submitted
        out = job.output()
        assert info["JobState"] == "FAILED" and info["ExitCode"] == "143:0", (info, out)
        assert "received signal 15" in out and "DUE TO TIME LIMIT" not in out, out
        assert elapsed < 60, f"the job ended {elapsed:.0f} s after it was submitted: {out}"
        m0 = read_json(ferry, job.url(0, "_ferry/manifest.json"))
        assert m0["final"] and m0["state"] == "interrupted" and m0["exit_code"] == 143, m0
        assert {f["path"] for f in m0["files"]} == {"ckpt.pt"}
    finally:
        ferry.run("rm", "-r", prefix)


def test_array_tasks_write_to_their_own_paths(ferry, rgw, slurm, prefix, tmp_path):
    """examples/slurm-array.sbatch as written, submitted with --array=0-2: each task runs
    `ferry run` with {job} = <array job>_<task> (as squeue names it) and its own seed; every task's
    outputs, manifest and latest pointer land under its own path, none under another's."""
    try:
        job = Job(ferry, rgw, slurm, prefix, tmp_path, TRAIN_ARGS, "--array=0-2",
                  script=SBATCH_ARRAY, runs="runs/sweep", log="sweep-%A_%a.out")
        tasks = [f"{job.id}_{t}" for t in range(3)]
        deadline = time.time() + 240
        while time.time() < deadline:
            p = subprocess.run(["squeue", "-h", "-j", job.id], env=job.env, capture_output=True,
                               text=True, timeout=30)
            if p.returncode == 0 and not p.stdout.strip():
                break
            time.sleep(0.5)
        else:
            job.cancel()
            raise AssertionError(f"array {job.id} still queued or running: {p.stdout}")
        logs = {t: log_tail(tmp_path / f"sweep-{t}.out", 100000) for t in tasks}
        results = set()
        for t in tasks:
            manifest = read_json(ferry, f"{job.runs}/{t}/0/_ferry/manifest.json")
            assert manifest["run_id"] == t and manifest["state"] == "succeeded", (manifest, logs[t])
            assert {f["path"] for f in manifest["files"]} == {"ckpt.pt", "result.txt"}
            latest = read_json(ferry, f"{job.runs}/{t}/_ferry/latest.json")
            assert latest["run_id"] == t and latest["url"].endswith(f"/{t}/0/"), latest
            results.add(read(ferry, f"{job.runs}/{t}/0/result.txt"))
        assert len(results) == 3  # three seeds, three different orders and weights
        listed = ferry.run("ls", job.runs + "/", check=True).stdout.decode()
        assert sorted(line.rstrip("/").rsplit("/", 1)[-1] for line in listed.split()
                      if line.endswith("/")) == tasks, listed
    finally:
        ferry.run("rm", "-r", prefix)
