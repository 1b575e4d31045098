"""docs/examples/slurm.sbatch as written, on a real single-node Slurm (tests/tools/slurm.sh): the job
trains docs/examples/train_resume.py under `ferry run --resume` on RGW, is requeued with
`scontrol requeue` once a checkpoint is uploaded, comes back as SLURM_RESTART_COUNT=1 on a node
whose scratch is empty, and finishes with exactly the result of an uninterrupted run.

What Slurm does on `scontrol requeue` of a running batch job (22.05, measured here): slurmstepd
prints `*** JOB N ON node CANCELLED AT ... DUE TO JOB REQUEUE ***`, sends SIGCONT and SIGTERM to
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

SBATCH = ROOT / "docs/examples/slurm.sbatch"
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


def job_info(slurm, job_id):
    """scontrol's fields of the job (JobState, Reason, Restarts, ExitCode, ...)."""
    p = subprocess.run(["scontrol", "show", "job", "-o", job_id], env=dict(os.environ, **slurm),
                       capture_output=True, text=True, timeout=30, check=True)
    return dict(f.split("=", 1) for f in p.stdout.split() if "=" in f)


def wait_for_state(slurm, job_id, states, timeout, log):
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = job_info(slurm, job_id)
        if info["JobState"] in states:
            return info
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} is {info['JobState']} ({info['Reason']}), not one of "
                         f"{states}, after {timeout} s; its output:\n{log_tail(log)}")


def test_requeued_slurm_job_resumes(ferry, rgw, slurm, prefix, tmp_path):
    try:
        run_requeued_job(ferry, rgw, slurm, prefix, tmp_path)
    finally:
        ferry.run("rm", "-r", prefix)


def run_requeued_job(ferry, rgw, slurm, prefix, tmp_path):
    data = prefix + "datasets/imagenet-shards/train"
    pack_dataset(ferry, tmp_path / "samples", data)
    want = reference(rgw, tmp_path / "reference", ["--data", data, *TRAIN_ARGS])

    # The job's environment, as a user's login shell would pass it (--export=ALL): what the
    # script's variables say to override, credentials in a credentials file for AWS_PROFILE's
    # default `training` (never argv), `ferry` and a PyTorch python3 in PATH, and node-local
    # scratch under TMPDIR.
    runs = prefix + "runs/resnet"
    credentials = tmp_path / "aws-credentials"
    credentials.write_text(f"[training]\naws_access_key_id = {rgw['FERRY_TEST_S3_ACCESS_KEY']}\n"
                           f"aws_secret_access_key = {rgw['FERRY_TEST_S3_SECRET_KEY']}\n")
    env = env_without(python_env(rgw), "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
    env.update(slurm, AWS_SHARED_CREDENTIALS_FILE=str(credentials), DATA=data, RUNS=runs,
               TRAIN=str(SCRIPT), TRAIN_ARGS=" ".join(TRAIN_ARGS + ["--step-seconds", "0.2"]),
               TMPDIR=str(tmp_path / "node"))
    env["PATH"] = os.pathsep.join([str(node_bin(tmp_path / "bin", ferry.binary)), SLURM_PATH])
    (tmp_path / "node").mkdir()
    log = tmp_path / "slurm.out"
    # Command-line options override the script's #SBATCH lines: this node has no GPU.
    p = subprocess.run(["sbatch", "--parsable", "--export=ALL", "--gres=none", f"--output={log}",
                        f"--chdir={tmp_path}", SBATCH], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    job = p.stdout.strip().split(";")[0]
    first = f"{runs}/{job}/0/_ferry/manifest.json"

    try:
        wait_for_checkpoint(ferry, first,
                            lambda: job_info(slurm, job)["JobState"] in ("PENDING", "RUNNING"))
        assert job_info(slurm, job)["JobState"] == "RUNNING", log_tail(log)
        subprocess.run(["scontrol", "requeue", job], env=env, check=True, timeout=30)
        # Slurm stops every process of the job, then holds it until its BeginTime: the moment
        # to make this "another node" whose scratch holds nothing of attempt 0.
        info = wait_for_state(slurm, job, ("PENDING",), 60, log)
        assert info["Reason"] == "BeginTime", info
        shutil.rmtree(tmp_path / "node" / job)
        info = wait_for_state(slurm, job, ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                                           "NODE_FAIL", "OUT_OF_MEMORY"), 180, log)
    finally:
        subprocess.run(["scancel", job], env=env, timeout=30)

    out = log_tail(log, 100000)
    assert info["JobState"] == "COMPLETED" and info["ExitCode"] == "0:0", out
    assert info["Restarts"] == "1", info
    assert "DUE TO JOB REQUEUE" in out, out
    assert out.count("resumed from attempt") == 1 and "resumed from attempt 0" in out, out

    m0 = read_json(ferry, first)
    assert m0["attempt"] == "0" and m0["final"] and m0["state"] == "interrupted", m0
    assert m0["run_id"] == job and m0["resumed_from"] is None
    m1 = read_json(ferry, f"{runs}/{job}/1/_ferry/manifest.json")
    assert m1["attempt"] == "1" and m1["final"] and m1["state"] == "succeeded", m1
    assert m1["resumed_from"]["attempt"] == "0" and m1["resumed_from"]["manifest"] == first
    assert {f["path"] for f in m1["files"]} == {"ckpt.pt", "result.txt"}
    assert read(ferry, f"{runs}/{job}/1/result.txt") == want, \
        "the requeued job saw other samples or reached other weights than an uninterrupted run"
    latest = read_json(ferry, f"{runs}/{job}/_ferry/latest.json")
    assert latest["attempt"] == "1" and latest["state"] == "succeeded", latest
    assert latest["exit_code"] == 0 and latest["final"], latest
