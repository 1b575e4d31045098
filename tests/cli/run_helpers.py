"""What the `ferry run` tests share (test_run.py, test_run_signals.py, test_run_preflight.py)."""
import json


def run_args(tmp_path, dst, script, *extra):
    """`ferry run --out TMP/out=DST --interval 1 EXTRA -- bash -c SCRIPT`."""
    return ["run", "--out", f"{tmp_path / 'out'}={dst}", "--interval", "1", *extra, "--",
            "bash", "-c", script]


def manifest(ferry, url):
    p = ferry.run("cat", url + "_ferry/manifest.json")
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
