"""The README's first command (scripts/demo.sh) runs scripts/demo.py after building: this runs
demo.py itself against the build under test, as a newcomer would see it, and checks the story:
server up, shards packed, training interrupted and resumed from its checkpoint at the loader's
position, the run finished in the tracker with system and data metrics, checkpoints uploaded
with manifests and deleted locally, wheels installed twice with upstream read once."""
import pathlib
import re
import subprocess

from conftest import python_env

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_demo_tells_the_whole_story(ferry_bin, rgw, tmp_path):
    env = python_env(rgw)
    try:  # under ctest's 600 s, so that a hang shows its output instead of only "Timeout"
        p = subprocess.run(["/usr/bin/python3", str(ROOT / "scripts/demo.py"), "--ferry", ferry_bin,
                            "--python-path", env["PYTHONPATH"], "--dir", str(tmp_path / "demo")],
                           env=env, capture_output=True, text=True, timeout=540)
    except subprocess.TimeoutExpired as e:
        text = lambda b: b.decode() if isinstance(b, bytes) else (b or "")  # noqa: E731
        raise AssertionError("the demo ran past 540 s; its output:\n" + text(e.stdout)[-6000:] +
                             "\nits errors:\n" + text(e.stderr)[-12000:]) from None
    out = p.stdout
    assert p.returncode == 0, out[-3000:] + p.stderr[-12000:]
    assert out.rstrip().endswith("demo finished"), out[-2000:]
    assert re.search(r"4 shards, [\d.]+ MiB", out)
    m = re.search(r"attempt 1 ended with exit code 143 at step (\d+)", out)
    assert m, out
    stopped = int(m.group(1))
    # Attempt 2 starts at the step attempt 1 stopped at, mid-epoch, and finishes all 150 steps.
    assert f"train: resumed at epoch 0, step {stopped}, {stopped * 32} samples into the epoch" in out
    assert "attempt 2 finished at step 150" in out
    assert re.search(r"\(status FINISHED, attempt 1, \d+ metric keys", out)
    assert "manifest runs/shapes-demo/0/_ferry/manifest.json: ckpt.pt" in out
    assert "manifest runs/shapes-demo/1/_ferry/manifest.json: ckpt.pt" in out
    assert "local checkpoint on the node after upload: deleted (verified first)" in out
    assert "upstream served 3 wheel downloads" in out  # 3 wheels, 2 installs: each fetched once
    assert "Traceback" not in out + p.stderr
