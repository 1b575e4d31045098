#!/usr/bin/env python3
"""Ferry's main job, end to end, on one machine (scripts/demo.sh builds, then runs this).

A local directory plays the NAS. In about 20 s on two cores (release build):
  1. `ferry serve` on the NAS: experiment tracker, web UI, PyPI/Hugging Face cache;
  2. a small image dataset (Debian's PIL) packed into WebDataset shards on the NAS;
  3. a CPU PyTorch training under `ferry run --track` streaming the shards with ferry.data,
     logging metrics, system metrics and data stalls, checkpointing with stage-out and
     delete-after-upload; interrupted once (SIGTERM, as a preemption);
  4. attempt 2 of the same job resumes from the newest complete checkpoint at the loader's
     exact position (`ferry run --resume`);
  5. the loader's speed from the NAS and from local disk;
  6. wheels installed with pip through the cache, twice (a second machine): bytes saved;
  7. where everything is: the run in the UI, the checkpoint manifest.
--keep leaves the server running to browse the UI. Usage:
  python3 scripts/demo.py --ferry build/release/src/apps/ferry [--dir /tmp/ferry-demo] [--keep]
"""
import argparse
import json
import os
import pathlib
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLASSES = 10
IMAGES_PER_CLASS = 160


def say(text=""):
    print(text, flush=True)


def step(n, title):
    say(f"\n\033[1m[{n}/7] {title}\033[0m" if sys.stdout.isatty() else f"\n[{n}/7] {title}")


def shell(cmd, **kw):
    """Runs a command, echoing it as a user would type it."""
    say("  $ " + " ".join(str(c) for c in cmd).replace(str(ROOT) + "/", ""))
    return subprocess.run([str(c) for c in cmd], check=True, text=True, **kw)


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024


class Server:
    def __init__(self, ferry, data, log, upstream):
        self.log = log
        self.proc = subprocess.Popen(
            [ferry, "serve", "--data", data, "--listen", "127.0.0.1:0", "--pypi-upstream", upstream],
            stdout=subprocess.DEVNULL, stderr=open(log, "w"), start_new_session=True)
        deadline = time.time() + 30
        while time.time() < deadline:
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", pathlib.Path(log).read_text())
            if m:
                self.url = m.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise SystemExit(f"demo: ferry serve did not start: {pathlib.Path(log).read_text()}")

    def api(self, path, body):
        req = urllib.request.Request(self.url + "/api/2.0/mlflow/" + path, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)

    def metric(self, name):
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as r:
            total = 0.0
            for line in r.read().decode().splitlines():
                if line.startswith(name):
                    total += float(line.rsplit(" ", 1)[1])
            return total

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                say("demo: ferry serve did not stop within 30 s of SIGTERM; killed. Its log ends:\n"
                    + pathlib.Path(self.log).read_text()[-3000:])


def make_images(directory):
    """IMAGES_PER_CLASS 32x32 PNGs per class: class c is a blob of colour c on noise."""
    import random
    from PIL import Image, ImageDraw
    rnd = random.Random(0)
    palette = [(230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48),
               (145, 30, 180), (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212)]
    directory.mkdir(parents=True)
    for i in range(CLASSES * IMAGES_PER_CLASS):
        c = i % CLASSES
        im = Image.effect_noise((32, 32), 40).convert("RGB")
        x, y, r = rnd.randint(4, 20), rnd.randint(4, 20), rnd.randint(5, 9)
        ImageDraw.Draw(im).ellipse((x, y, x + r * 2, y + r * 2), fill=palette[c])
        im.save(directory / f"{i:05d}.png")
        (directory / f"{i:05d}.cls").write_text(str(c))


def train_command(ferry, server, nas, job_dir, shards):
    return [ferry, "run", "--track", server.url, "--experiment", "demo", "--run-name", "resnet-tiny",
            "--system-metrics-interval", "2",
            "--resume", job_dir / "ckpt", "--out", f"{job_dir / 'ckpt'}={nas}/runs/{{job}}/{{attempt}}/",
            "--delete-after-upload", "ckpt.pt", "--interval", "30",
            "--", sys.executable, ROOT / "examples/train.py", "--data", shards,
            "--out", job_dir / "ckpt", "--epochs", "3", "--workers", "2"]


def process_tree(root_pid):
    """Lines (pid, parent, state, kernel wait, name) for root_pid and its descendants, and their
    pids: what a hung attempt was doing. From /proc/PID/stat, which never blocks (ps reads
    /proc/PID/cmdline, which waits for the process's memory lock, and once hung in CI)."""
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
            wchan = open(f"/proc/{d}/wchan").read()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        procs[int(d)] = (int(rest[1]), rest[0], wchan, name)
    pids, changed = {root_pid}, True
    while changed:
        changed = False
        for pid, (ppid, *_) in procs.items():
            if ppid in pids and pid not in pids:
                pids.add(pid)
                changed = True
    lines = ["  PID  PPID STATE WAIT                 NAME"]
    lines += [f"{pid:5} {procs[pid][0]:5} {procs[pid][1]:5} {procs[pid][2]:20.20} {procs[pid][3]}"
              for pid in sorted(pids) if pid in procs]
    return "\n".join(lines), pids


def run_training(cmd, env, interrupt_at=None, deadline_s=200):
    """Runs `ferry run ...`, showing the training's progress lines; with interrupt_at, sends
    SIGTERM to ferry (as a scheduler does at preemption) once that step is logged. An attempt
    still running after deadline_s is a demo failure that shows where it stood."""
    say("  $ " + " ".join(str(c) for c in cmd).replace(str(ROOT) + "/", ""))
    p = subprocess.Popen([str(c) for c in cmd], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in p.stdout] + [lines.put(None)],
                     daemon=True).start()
    last_step, sent, seen = 0, False, []
    deadline = time.time() + deadline_s
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.time()))
        except queue.Empty:
            tree, pids = process_tree(p.pid)
            # Python processes print their threads' stacks on SIGABRT (PYTHONFAULTHANDLER); give
            # the tracebacks a moment to come through ferry run's output.
            for line in tree.splitlines()[1:]:
                if line.split()[-1].startswith("python"):
                    try:
                        os.kill(int(line.split()[0]), signal.SIGABRT)
                    except (ProcessLookupError, ValueError):
                        pass
            until = time.time() + 3
            while time.time() < until:
                try:
                    line = lines.get(timeout=max(0.0, until - time.time()))
                except queue.Empty:
                    break
                if line is None:
                    break
                seen.append(line)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            raise SystemExit(f"demo: the attempt is still running after {deadline_s} s "
                             f"(SIGTERM sent: {sent}, ferry run exited: {p.poll() is not None}); "
                             f"its last output:\n" + "".join(seen[-150:]) +
                             f"\nits processes:\n{tree}")
        if line is None:
            break
        seen.append(line)
        m = re.search(r"step (\d+)", line)
        if m:
            last_step = int(m.group(1))
        if line.startswith("train:") or line.startswith("ferry:") or "resumed" in line:
            say("    " + line.rstrip())
        if interrupt_at and not sent and last_step >= interrupt_at:
            say(f"  ... sending SIGTERM to ferry run at step {last_step} (a preemption)")
            p.send_signal(signal.SIGTERM)
            sent = True
    rc = p.wait()
    if rc not in (0, 143):
        say("  its last output:\n" + "".join("    " + l for l in seen[-30:]))
    return rc, last_step


def loader_speed(shards, seconds_cap=20):
    code = (
        "import sys, time\n"
        "from ferry.data import ShardDataset\n"
        "from torch.utils.data import DataLoader\n"
        "ds = ShardDataset(sys.argv[1], shuffle=False)\n"
        "best = 0\n"
        "for _ in range(5):  # the best of 5 passes: one pass is only a few ms here\n"
        "    n, t = 0, time.perf_counter()\n"
        "    for s in DataLoader(ds, batch_size=None, num_workers=0):\n"
        "        n += 1\n"
        "    best = max(best, n / (time.perf_counter() - t))\n"
        "print(best)\n")
    out = subprocess.run([sys.executable, "-c", code, str(shards)], check=True, text=True,
                         capture_output=True, timeout=seconds_cap * 10)
    return float(out.stdout.strip())


def pip_install(server, target, log):
    cmd = [sys.executable, "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check",
           "--index-url", server.url + "/pypi/simple/", "--target", target,
           "ferrydemo-alpha==2.0", "FerryDemo_Gamma"]
    say("  $ pip install --index-url " + server.url + "/pypi/simple/ --target " + str(target) +
        " ferrydemo-alpha==2.0 FerryDemo_Gamma")
    subprocess.run(cmd, check=True, stdout=open(log, "a"), stderr=subprocess.STDOUT, timeout=300)


def main():
    ap = argparse.ArgumentParser(description="Ferry's main job on one machine")
    ap.add_argument("--ferry", required=True, help="the ferry binary")
    ap.add_argument("--python-path", help="directory holding the ferry Python package")
    ap.add_argument("--dir", help="working directory (default: a new one under /tmp)")
    ap.add_argument("--keep", action="store_true", help="leave ferry serve running to browse the UI")
    a = ap.parse_args()
    ferry = os.path.abspath(a.ferry)
    work = pathlib.Path(a.dir or tempfile.mkdtemp(prefix="ferry-demo."))
    if a.dir and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    nas, node = work / "nas", work / "gpu-node"
    nas.mkdir()
    node.mkdir()
    env = dict(os.environ)
    if a.python_path:
        env["PYTHONPATH"] = os.path.abspath(a.python_path) + os.pathsep + env.get("PYTHONPATH", "")
    os.environ.update(env)
    say(f"Ferry demo: a training team's storage path on one machine. NAS = {nas}, "
        f"GPU node scratch = {node}")

    standin = work / "pypi-upstream"
    subprocess.run([sys.executable, ROOT / "tests/tools/pypi_standin.py", "start", standin],
                   check=True, stdout=subprocess.DEVNULL)
    upstream = dict(line.strip().split("=", 1) for line in open(standin / "env") if "=" in line)
    server = None
    try:
        step(1, "ferry serve on the NAS: tracker + web UI + PyPI/Hugging Face cache")
        server = Server(ferry, nas / "serve", work / "serve.log", upstream["PYPI_STANDIN_URL"])
        say(f"  $ ferry serve --data {nas / 'serve'}   ->  {server.url}  (UI, MLflow API, /pypi, /hf)")

        step(2, "a small image dataset, packed into WebDataset shards on the NAS")
        t = time.time()
        make_images(work / "images")
        say(f"  made {CLASSES * IMAGES_PER_CLASS} images (32x32 PNG, {CLASSES} classes) with PIL "
            f"in {time.time() - t:.1f} s")
        shards = nas / "datasets" / "shapes" / "train"
        shell([ferry, "shard", "pack", work / "images", shards, "--samples-per-shard", "400",
               "--shuffle"], stdout=subprocess.DEVNULL)
        index = pathlib.Path(str(shards) + ".index.json")
        tars = sorted(shards.parent.glob("train-*.tar"))
        say(f"  {len(tars)} shards, {human(sum(p.stat().st_size for p in tars))}, index {index.name}")

        step(3, "training under ferry run --track, interrupted once (attempt 1)")
        # PYTHONFAULTHANDLER: an attempt stuck past its deadline gets SIGABRT and prints where
        # each of its Python processes stood (run_training).
        job_env = dict(env, FERRY_RUN_ID="shapes-demo", PYTHONFAULTHANDLER="1")
        cmd = train_command(ferry, server, nas, node / "job", index)
        rc1, stopped = run_training(cmd, job_env, interrupt_at=30)
        say(f"  attempt 1 ended with exit code {rc1} at step {stopped}")

        step(4, "attempt 2: the same command resumes from the newest complete checkpoint")
        rc2, last = run_training(cmd, job_env)
        if rc2 != 0:
            raise SystemExit(f"demo: attempt 2 failed with exit code {rc2}")
        say(f"  attempt 2 finished at step {last}")

        step(5, "the loader's speed: from the NAS and from local disk")
        local = node / "local-copy"
        out = shell([ferry, "cp", "-r", str(shards.parent) + "/", str(local) + "/"],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        say("    " + out.stdout.strip().replace("\n", "\n    "))
        nas_rate = loader_speed(index)
        local_rate = loader_speed(local / index.name)
        say(f"  {nas_rate:,.0f} samples/s from the NAS, {local_rate:,.0f} samples/s from local disk "
            f"({nas_rate / local_rate:.2f}x; here the 'NAS' is a local directory too)")

        step(6, "wheels through the cache: two machines install, upstream is read once")
        before = server.metric("ferry_cache_bytes_saved_total")
        pip_install(server, node / "site-a", work / "pip.log")
        pip_install(server, node / "site-b", work / "pip.log")
        saved = server.metric("ferry_cache_bytes_saved_total") - before
        fetched = len([l for l in open(standin / "access.log") if "/files/" in l and ".metadata" not in l])
        say(f"  both installs complete; upstream served {fetched} wheel downloads, the cache saved "
            f"{human(int(saved))} (the second machine read everything from the NAS)")

        step(7, "where everything is")
        found = json.load(urllib.request.urlopen(
            server.url + "/api/2.0/mlflow/experiments/get-by-name?experiment_name=demo", timeout=10))
        exp_id = found["experiment"]["experiment_id"]
        run = server.api("runs/search", {"experiment_ids": [exp_id], "max_results": 1})["runs"][0]
        tags = {t["key"]: t["value"] for t in run["data"].get("tags", [])}
        metrics = {m["key"]: m["value"] for m in run["data"].get("metrics", [])}
        say(f"  run in the UI:  {server.url}/#/runs/{run['info']['run_id']}  "
            f"(status {run['info']['status']}, attempt {tags.get('ferry.attempt', '?')}, "
            f"{len(metrics)} metric keys incl. system/ and data/)")
        manifests = sorted((nas / "runs").glob("*/*/_ferry/manifest.json"))
        for m in manifests:
            doc = json.loads(m.read_text())
            files = [f"{f['path']} ({human(f['size'])}, crc32c {f.get('crc32c', '?')})"
                     for f in doc.get("files", [])]
            say(f"  manifest {m.relative_to(nas)}: {', '.join(files) or 'no files'}")
        left = list((node / "job" / "ckpt").glob("ckpt.pt"))
        say(f"  local checkpoint on the node after upload: {'kept' if left else 'deleted (verified first)'}")
        say(f"  loader: {nas_rate:,.0f} samples/s from the NAS vs {local_rate:,.0f} local; "
            f"cache: {human(int(saved))} saved")
        if a.keep:
            say(f"\nferry serve keeps running at {server.url} (pid {server.proc.pid}); "
                f"stop it with: kill {server.proc.pid}")
            server = None
        say("\ndemo finished")
    finally:
        try:
            if server:
                server.stop()
        finally:
            subprocess.run([sys.executable, ROOT / "tests/tools/pypi_standin.py", "stop", standin],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
