"""What the resume tests share (tests/cli/test_resume.py, test_slurm.py, test_examples.py): a small
shard dataset on RGW, the uninterrupted reference run of examples/train_resume.py, a "node"
whose PATH has `ferry` and a `python3` with PyTorch, and polling a job's uploads."""
import json
import os
import random
import subprocess
import time

from conftest import ROOT, python_env

SCRIPT = ROOT / "examples/train_resume.py"


def pack_dataset(ferry, src, url):
    """240 samples in 12 shards at url (a few hundred KiB); src is an empty local dir."""
    src.mkdir(parents=True)
    rnd = random.Random(7)
    for i in range(240):
        (src / f"s{i:04d}.cls").write_text(str(i % 10))
        (src / f"s{i:04d}.bin").write_bytes(rnd.randbytes(rnd.randint(10, 2000)))
    ferry.run("shard", "pack", src, url, "--samples-per-shard", "20", check=True)


def reference(rgw, out, args):
    """result.txt of an uninterrupted run of train_resume.py with args, without ferry."""
    p = subprocess.run(["/usr/bin/python3", SCRIPT, *args, "--out", out], env=python_env(rgw),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return (out / "result.txt").read_text()


def node_bin(directory, ferry_binary):
    """A directory to put first in PATH: `ferry` (FERRY_BIN) and `python3` (Debian's, which has
    PyTorch; the first python3 on this machine's PATH has not), as a training node has them."""
    directory.mkdir(parents=True)
    (directory / "ferry").symlink_to(ferry_binary)
    (directory / "python3").symlink_to("/usr/bin/python3")
    return directory


def read(ferry, url):
    """The object's text, or None when it does not exist (yet)."""
    p = ferry.run("cat", url)
    return p.stdout.decode() if p.returncode == 0 else None


def read_json(ferry, url):
    text = read(ferry, url)
    assert text is not None, f"{url} does not exist"
    return json.loads(text)


def wait_for_checkpoint(ferry, manifest_url, running, timeout=120):
    """Waits until the manifest at manifest_url lists ckpt.pt (a checkpoint was uploaded) while
    running() is true; fails when running() turns false first."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert running(), f"the training ended before a checkpoint was seen at {manifest_url}"
        text = read(ferry, manifest_url)
        if text and any(f["path"] == "ckpt.pt" for f in json.loads(text)["files"]):
            return
        time.sleep(0.2)
    raise AssertionError(f"no checkpoint in {manifest_url} after {timeout} s")


def env_without(env, *names):
    return {k: v for k, v in env.items() if k not in names}


def log_tail(path, chars=4000):
    return path.read_text(errors="replace")[-chars:] if os.path.exists(path) else f"({path} missing)"
