"""Scale-out on several hosts (network namespaces, multihost_helpers.py): 4 hosts, each behind
its own tbf-shaped link, reach one Ceph RGW and one `ferry serve` over the network, not loopback.

- 4 loader ranks (RANK/WORLD_SIZE as torchrun sets them) read one dataset from one RGW: every
  sample exactly once per epoch, and the same order again for the same seed.
- 4 hosts download one model (npm @huggingface/hub) through one `ferry serve` cache at the same
  time: all get the same bytes and upstream's CDN serves each file once.
- 8 concurrent `ferry run` jobs (2 per host, each run twice: attempts 0 and 1) write under one
  prefix: zero collisions, each job's `latest` pointer names its own newest complete attempt.
Needs root and iproute2; skipped elsewhere."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse

import pytest

from conftest import base_env, python_env
from hf_helpers import NPM, Hub
from multihost_helpers import Forwarder, Hosts
from training import pack_dataset

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("tc"),
                                reason="network namespaces need root and iproute2")


@pytest.fixture
def hosts():
    net = Hosts(4, rate="400mbit")
    yield net
    net.close()


@pytest.fixture
def s3_on_network(hosts, rgw):
    """RGW (bound to 127.0.0.1 by the fixture) reachable at the bridge's address."""
    port = int(urllib.parse.urlparse(rgw["FERRY_TEST_S3_ENDPOINT"]).port)
    fwd = Forwarder(hosts.gateway, 0, "127.0.0.1", port)
    yield fwd
    fwd.close()


def host_env(rgw, endpoint, **extra):
    env = python_env(rgw, **extra)
    env["AWS_ENDPOINT_URL"] = endpoint
    return env


READER = """
import json, sys
from ferry.data import ShardDataset
ds = ShardDataset(sys.argv[1], shuffle=True, seed=11)   # rank and world size from the env
order = []
for epoch in (0, 1):
    ds.set_epoch(epoch)
    order.append([s["__key__"] for s in ds])
print(json.dumps(order))
"""


def test_four_ranks_read_every_sample_once_per_epoch_in_a_seeded_order(
        ferry, rgw, hosts, s3_on_network, prefix, tmp_path):
    index = prefix + "train"
    pack_dataset(ferry, tmp_path / "src", index)  # 240 samples in 12 shards
    index += ".index.json"
    (tmp_path / "reader.py").write_text(READER)

    def read_all():
        procs = [hosts.popen(r, ["/usr/bin/python3", tmp_path / "reader.py", index],
                             env=host_env(rgw, s3_on_network.url, RANK=str(r), WORLD_SIZE="4"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for r in range(4)]
        out = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=300)
            assert p.returncode == 0, stderr[-3000:]
            out.append(json.loads(stdout))
        return out

    first = read_all()
    for epoch in (0, 1):
        keys = [k for rank in first for k in rank[epoch]]
        assert len(keys) == 240 and len(set(keys)) == 240, (epoch, len(keys), len(set(keys)))
    assert [r[0] for r in first] != [r[1] for r in first]  # a new epoch, a new order
    assert read_all() == first  # the same seed: the same order on every rank
    assert s3_on_network.connections >= 4  # the hosts went through the network


def test_four_hosts_download_one_model_through_one_cache_upstream_read_once(
        ferry_bin, hosts, tmp_path):
    if not (NPM / "node_modules/@huggingface/hub").exists():
        pytest.fail("npm @huggingface/hub is missing: run scripts/install-deps.sh")
    hub = Hub(tmp_path / "hub", lfs_size=8 << 20)
    err = tmp_path / "serve.log"
    serve = subprocess.Popen(
        [ferry_bin, "serve", "--data", tmp_path / "nas", "--listen", f"{hosts.gateway}:0",
         "--allow-remote", "--allow-anonymous", "--hf-upstream", hub.url,
         "--upstream-allow", hub.cdn],
        env=base_env({"FERRY_TEST_S3_ACCESS_KEY": "", "FERRY_TEST_S3_SECRET_KEY": "",
                      "FERRY_TEST_S3_ENDPOINT": "", "FERRY_TEST_S3_REGION": ""}),
        stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    try:
        url = None
        for _ in range(300):
            m = re.search(r"listening on (http://[\d.]+:\d+)", err.read_text())
            if m:
                url = m.group(1)
                break
            assert serve.poll() is None, err.read_text()
            time.sleep(0.1)
        assert url and url.startswith(f"http://{hosts.gateway}:"), err.read_text()
        procs = [hosts.popen(i, ["node", NPM / "hf_client.mjs", "snapshot", url + "/hf",
                                 "org/tiny-model", "main", tmp_path / f"hf-cache-{i}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(4)]
        dirs = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=300)
            assert p.returncode == 0, stderr[-2000:]
            dirs.append(json.loads(stdout.strip().splitlines()[-1])["dir"])
        weights = [open(os.path.join(d, "model.safetensors"), "rb").read() for d in dirs]
        assert len(weights[0]) == 8 << 20 and all(w == weights[0] for w in weights)
        cdn = [e for e in hub.log() if e["server"] == "cdn" and e["method"] == "GET"]
        paths = [e["path"] for e in cdn]
        assert paths and len(paths) == len(set(paths)), paths  # each blob from upstream once
    finally:
        serve.terminate()
        serve.wait(timeout=30)
        hub.stop()


JOB = """
import os, sys, time
out = os.environ["FERRY_OUTPUT"] if "FERRY_OUTPUT" in os.environ else sys.argv[1]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "weights.bin"), "wb") as f:
    f.write((os.environ["FERRY_RUN_ID"] + "/" + os.environ.get("FERRY_ATTEMPT", "?") + "\\n").encode() * 4096)
time.sleep(0.5)
"""


def test_eight_concurrent_jobs_write_under_one_prefix_without_collisions(
        ferry, rgw, hosts, s3_on_network, prefix, tmp_path, s3):
    (tmp_path / "job.py").write_text(JOB)
    bucket, key_prefix = prefix[5:].split("/", 1)

    def wave():
        procs = []
        for j in range(8):
            out = tmp_path / f"node-{j}" / "out"
            env = base_env(rgw, FERRY_RUN_ID=f"job{j}", AWS_ENDPOINT_URL=s3_on_network.url,
                           TMPDIR=str(tmp_path))
            cmd = [ferry.binary, "run", "--no-preflight", "--out", f"{out}={prefix}runs/{{job}}/{{attempt}}/",
                   "--", sys.executable, tmp_path / "job.py", out]
            procs.append((j, hosts.popen(j % 4, cmd, env=env, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)))
        for j, p in procs:
            _, stderr = p.communicate(timeout=300)
            assert p.returncode == 0, (j, stderr[-2000:])

    wave()
    wave()  # the same 8 jobs again: attempt 1 each, still concurrently
    objects = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=key_prefix + "runs/"):
        objects += [o["Key"][len(key_prefix) + len("runs/"):] for o in page.get("Contents", [])]
    for j in range(8):
        mine = [k for k in objects if k.startswith(f"job{j}/")]
        assert f"job{j}/0/weights.bin" in mine and f"job{j}/1/weights.bin" in mine, mine
        for attempt in (0, 1):
            body = s3.get_object(Bucket=bucket, Key=f"{key_prefix}runs/job{j}/{attempt}/weights.bin")["Body"].read()
            assert body.startswith(f"job{j}/".encode()), body[:40]
            manifest = json.loads(s3.get_object(
                Bucket=bucket, Key=f"{key_prefix}runs/job{j}/{attempt}/_ferry/manifest.json")["Body"].read())
            assert manifest["run_id"] == f"job{j}" and str(manifest["attempt"]) == str(attempt)
            assert manifest["state"] == "succeeded" and manifest["final"] is True
        latest = json.loads(s3.get_object(
            Bucket=bucket, Key=f"{key_prefix}runs/job{j}/_ferry/latest.json")["Body"].read())
        assert latest["run_id"] == f"job{j}" and str(latest["attempt"]) == "1", latest
        assert latest["url"].endswith(f"runs/job{j}/1/") and latest["final"] is True
    # Nothing outside the 8 jobs' own prefixes.
    assert {k.split("/", 1)[0] for k in objects} == {f"job{j}" for j in range(8)}
