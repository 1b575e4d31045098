"""The examples in examples run as written.

test_kubernetes_job_example_resumes_a_retried_pod: there is no cluster here, so the test plays
the part of one for examples/kubernetes-job.yaml. It takes the container's command and env
from the YAML and substitutes only what a cluster provides: the buckets (s3://runs/...,
s3://datasets/...) become prefixes of the RGW test bucket, each emptyDir mount (/scratch) a fresh
directory per pod, the env's valueFrom fields what Kubernetes fills in (the Job controller's
job-name label, the s3-credentials Secret), the S3 service address RGW's; the image's `ferry`,
`python3` (with PyTorch) and train_resume.py are the build's, Debian's and the repository's.
The first pod is stopped the way the kubelet stops one (SIGTERM to the container's main
process, SIGKILL after terminationGracePeriodSeconds); the retried pod, on an empty scratch dir
with nothing but the same env, must resume it and finish with an uninterrupted run's result.
"""
import json
import re
import shutil
import signal
import subprocess

import pytest

from conftest import ROOT, python_env
from training import (SCRIPT, env_without, log_tail, node_bin, pack_dataset, read, read_json,
                      reference, wait_for_checkpoint)

yaml = pytest.importorskip("yaml", reason="PyYAML (Debian python3-yaml; scripts/install-deps.sh)")

KUBERNETES_JOB = ROOT / "examples/kubernetes-job.yaml"

# The tiny test dataset trains in a second; each step pretends to take this long (a GPU's work)
# so that the first pod can be stopped mid-epoch. It changes no sample and no weight.
STEP_SECONDS = ["--step-seconds", "0.2"]


class Cluster:
    """What a cluster gives the example's pods, here."""

    def __init__(self, job, rgw, prefix, tmp_path, ferry_binary):
        self.job, self.rgw, self.prefix, self.tmp_path = job, rgw, prefix, tmp_path
        self.pod_spec = job["spec"]["template"]["spec"]
        (self.container,) = self.pod_spec["containers"]
        self.bin = node_bin(tmp_path / "image-bin", ferry_binary)
        volumes = {v["name"]: v for v in self.pod_spec.get("volumes", [])}
        self.mounts = {}
        for mount in self.container.get("volumeMounts", []):
            assert "emptyDir" in volumes[mount["name"]], f"only emptyDir volumes are simulated: {mount}"
            self.mounts[mount["mountPath"]] = mount["name"]

    def bucket(self, text):
        """s3://BUCKET/... -> s3://<test bucket>/<test prefix>/BUCKET/..."""
        return text.replace("s3://", self.prefix)

    def command(self, pod_dir):
        """The container's command for a pod whose node-local directories are under pod_dir."""
        out = []
        for arg in self.container["command"]:
            arg = self.bucket(arg)
            for path, name in self.mounts.items():  # /scratch/ckpt, or --out's /scratch/ckpt=...
                arg = re.sub(rf"(^|=){re.escape(path)}(?=/|$)", rf"\g<1>{pod_dir / name}", arg)
            out.append({"train_resume.py": str(SCRIPT)}.get(arg, arg))
        return out

    def env(self):
        """The container's env with each valueFrom filled in, on top of the image's environment
        (PATH with ferry and python3, ferry's Python package importable) and nothing else: no
        scheduler variables, no credentials but the Secret's."""
        image = env_without(python_env(self.rgw), "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                            "AWS_ENDPOINT_URL", "AWS_REGION")
        image["PATH"] = f"{self.bin}:/usr/bin:/bin"
        secrets = {"s3-credentials": {"access_key_id": self.rgw["FERRY_TEST_S3_ACCESS_KEY"],
                                      "secret_access_key": self.rgw["FERRY_TEST_S3_SECRET_KEY"]}}
        # The Job controller labels its pods job-name=<the Job's name>.
        fields = {"metadata.labels['job-name']": self.job["metadata"]["name"]}
        # The S3 service's address in the cluster (http://rgw.storage.svc:7480) is RGW's here.
        services = {"AWS_ENDPOINT_URL": self.rgw["FERRY_TEST_S3_ENDPOINT"]}
        for var in self.container["env"]:
            if "value" in var:
                image[var["name"]] = services.get(var["name"], var["value"])
            elif "secretKeyRef" in var["valueFrom"]:
                ref = var["valueFrom"]["secretKeyRef"]
                image[var["name"]] = secrets[ref["name"]][ref["key"]]
            else:
                image[var["name"]] = fields[var["valueFrom"]["fieldRef"]["fieldPath"]]
        return image

    def run_pod(self, name, extra_args):
        pod_dir = self.tmp_path / name
        for volume in self.mounts.values():
            (pod_dir / volume).mkdir(parents=True)
        stderr = pod_dir / "stderr"
        with open(stderr, "w") as f:
            proc = subprocess.Popen(self.command(pod_dir) + extra_args, env=self.env(),
                                    stdout=subprocess.DEVNULL, stderr=f)
        return proc, stderr


def test_kubernetes_job_example_resumes_a_retried_pod(ferry, rgw, prefix, tmp_path):
    job = yaml.safe_load(KUBERNETES_JOB.read_text())
    assert job["kind"] == "Job"
    cluster = Cluster(job, rgw, prefix, tmp_path, ferry.binary)
    command = cluster.container["command"]
    # The kubelet SIGKILLs a pod terminationGracePeriodSeconds after its SIGTERM: ferry must be
    # done waiting --grace for train.py by then, and have time left for the final sync.
    grace = int(command[command.index("--grace") + 1])
    termination_grace = cluster.pod_spec["terminationGracePeriodSeconds"]
    assert termination_grace > grace, (termination_grace, grace)
    # A failed pod is retried as a new pod (restartPolicy Never: a new attempt, empty scratch).
    assert cluster.pod_spec["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] >= 1
    try:
        run_and_retry(ferry, rgw, cluster, termination_grace, command)
    finally:
        ferry.run("rm", "-r", prefix)


def run_and_retry(ferry, rgw, cluster, termination_grace, command):
    train_args = [cluster.bucket(a) for a in command[command.index("train_resume.py") + 1:]]
    data = train_args[train_args.index("--data") + 1]
    pack_dataset(ferry, cluster.tmp_path / "samples", data)
    want = reference(rgw, cluster.tmp_path / "reference", train_args)
    out_arg = cluster.bucket(command[command.index("--out") + 1])
    runs = out_arg.split("=", 1)[1].replace("{job}", job_name(cluster)).split("{attempt}")[0]

    first, stderr = cluster.run_pod("pod-1", STEP_SECONDS)
    try:
        wait_for_checkpoint(ferry, runs + "0/_ferry/manifest.json", lambda: first.poll() is None)
        first.send_signal(signal.SIGTERM)  # the kubelet: SIGTERM to the main process only
        first.wait(timeout=termination_grace)
    finally:
        if first.poll() is None:
            first.kill()  # the kubelet's SIGKILL after the grace period
            first.wait()
            pytest.fail(f"pod 1 outlived terminationGracePeriodSeconds: {log_tail(stderr)}")
    err = stderr.read_text()
    assert first.returncode == 128 + signal.SIGTERM, err
    assert "resumed from" not in err, err
    m0 = read_json(ferry, runs + "0/_ferry/manifest.json")
    assert m0["attempt"] == "0" and m0["final"] and m0["state"] == "interrupted", m0
    assert m0["run_id"] == job_name(cluster) and m0["resumed_from"] is None

    # The retried pod: another node, an empty emptyDir, the same env (same Job name).
    second, stderr = cluster.run_pod("pod-2", STEP_SECONDS)
    second.wait(timeout=300)
    err = stderr.read_text()
    assert second.returncode == 0, err
    assert "resumed from attempt 0" in err, err
    m1 = read_json(ferry, runs + "1/_ferry/manifest.json")
    assert m1["attempt"] == "1" and m1["final"] and m1["state"] == "succeeded", m1
    assert m1["resumed_from"]["attempt"] == "0"
    assert m1["resumed_from"]["manifest"] == runs + "0/_ferry/manifest.json"
    assert {f["path"] for f in m1["files"]} == {"ckpt.pt", "result.txt"}
    assert read(ferry, runs + "1/result.txt") == want, \
        "the retried pod saw other samples or reached other weights than an uninterrupted run"
    latest = read_json(ferry, runs + "_ferry/latest.json")
    assert latest["attempt"] == "1" and latest["state"] == "succeeded", latest
    assert latest["exit_code"] == 0 and latest["final"], latest


def job_name(cluster):
    return cluster.job["metadata"]["name"]


def validate_kubernetes(docs):
    """[{kind, name, ok, error}] from tests/tools/npm/k8s_validate.mjs: the objects checked against
    the Kubernetes OpenAPI schema (npm kubernetes-models). Kubernetes cannot run here."""
    node = shutil.which("node")
    if not node or not (ROOT / "tests/tools/npm/node_modules/kubernetes-models").exists():
        pytest.fail("node and npm kubernetes-models are needed: run scripts/install-deps.sh")
    p = subprocess.run([node, str(ROOT / "tests/tools/npm/k8s_validate.mjs")], input=json.dumps(docs),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_kubernetes_manifests_are_valid_against_the_kubernetes_schema():
    docs = [d for d in yaml.safe_load_all(KUBERNETES_JOB.read_text()) if d]
    results = validate_kubernetes(docs)
    assert results and all(r["ok"] for r in results), results
    # The validator does catch a broken manifest (a typo'd restartPolicy, a wrong type).
    broken = json.loads(json.dumps(docs[0]))
    broken["spec"]["template"]["spec"]["restartPolicy"] = "Sometimes"
    broken["spec"]["backoffLimit"] = "three"
    [bad] = validate_kubernetes([broken])
    assert not bad["ok"] and "restartPolicy" in bad["error"] and "backoffLimit" in bad["error"], bad
