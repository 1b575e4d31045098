"""Shared helpers for Ferry's benchmarks: a real RGW, timed runs with peak RSS, ratio tables.

Every benchmark runs Ferry and its peers on the same data against the same server in one run,
repeats each measurement, and reports the median with the ratio to Ferry. Speed is reported,
never asserted.
"""
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def ferry_binary():
    path = os.environ.get("FERRY_BIN") or str(ROOT / "build/release/src/apps/ferry")
    if not os.path.exists(path):
        sys.exit(f"no ferry binary at {path}: cmake --preset release && cmake --build --preset release")
    return os.path.abspath(path)


class Rgw:
    """Starts tests/tools/rgw.sh in DIR (reusing a running one) and exposes its settings."""

    def __init__(self, directory, bluestore_gib=None):
        self.dir = pathlib.Path(directory)
        args = [str(ROOT / "tests/tools/rgw.sh"), "start", str(self.dir)]
        if bluestore_gib:
            args += ["--bluestore", str(bluestore_gib)]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        self.env = {}
        for line in open(self.dir / "env"):
            k, _, v = line.strip().partition("=")
            self.env[k] = v
        self.endpoint = self.env["FERRY_TEST_S3_ENDPOINT"]
        self.bucket = self.env["FERRY_TEST_S3_BUCKET"]
        # What the OSD stores objects in (a reused RGW may not be what bluestore_gib asked for).
        self.objectstore = "unknown"
        for line in open(self.dir / "ceph.conf"):
            k, _, v = line.partition("=")
            if k.strip() == "osd_objectstore":
                self.objectstore = v.strip()

    def client_env(self):
        """Credentials and endpoint the AWS way, for ferry and aws-cli; rclone via its env config."""
        e = dict(os.environ)
        e.update({
            "AWS_ACCESS_KEY_ID": self.env["FERRY_TEST_S3_ACCESS_KEY"],
            "AWS_SECRET_ACCESS_KEY": self.env["FERRY_TEST_S3_SECRET_KEY"],
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
            "RCLONE_CONFIG_RGW_TYPE": "s3",
            "RCLONE_CONFIG_RGW_PROVIDER": "Ceph",
            "RCLONE_CONFIG_RGW_ENDPOINT": self.endpoint,
            "RCLONE_CONFIG_RGW_ACCESS_KEY_ID": self.env["FERRY_TEST_S3_ACCESS_KEY"],
            "RCLONE_CONFIG_RGW_SECRET_ACCESS_KEY": self.env["FERRY_TEST_S3_SECRET_KEY"],
        })
        # rclone 1.60 fails every S3 call when AWS_CA_BUNDLE is set (see shared/ENVIRONMENT.md).
        for k in ("AWS_CA_BUNDLE",):
            e.pop(k, None)
        return e

    def stop(self):
        subprocess.run([str(ROOT / "tests/tools/rgw.sh"), "stop", str(self.dir)], check=False)

    def cpu(self):
        """CPU seconds (user+system) the server's daemons (RGW, OSD, monitor) have used so far:
        on this machine they share the clients' cores, so a tool's time also depends on how
        much CPU the server needs for what that tool sends."""
        total = 0
        for name in ("rgw", "osd", "mon"):
            try:
                pid = (self.dir / f"{name}.pid").read_text().strip()
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")


def kernel_threads_cpu():
    """{pid: user+system CPU ticks} of every kernel thread (writeback flushers, kworkers,
    ksoftirqd) so far: the work a tool leaves to the kernel, e.g. writing back the files it did
    not fsync, which its own rusage does not show. kernel_threads_cpu_since() subtracts."""
    ticks = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # fields from 3 (state) on
        if int(fields[6]) & 0x00200000:  # field 9, flags: PF_KTHREAD
            ticks[pid] = int(fields[11]) + int(fields[12])  # fields 14, 15: utime, stime
    return ticks


def kernel_threads_cpu_since(before):
    """CPU seconds kernel threads used since `before` (kernel_threads_cpu()): per thread, so a
    kworker that exits in between is left out (its share of the span uncounted, instead of its
    whole past subtracted: a plain total went negative), and one started in between counts from
    zero."""
    now = kernel_threads_cpu()
    return sum(t - before.get(pid, 0) for pid, t in now.items()) / os.sysconf("SC_CLK_TCK")


def timed(cmd, env, before=None, durable=False, server=None):
    """Runs cmd once; returns (seconds, peak RSS in MiB, user+system CPU seconds of the process
    and its waited-for children, kernel threads' CPU seconds or None, the server's CPU seconds
    over the run or None; server: an Rgw, whose daemons' CPU is read). durable: the clock stops
    after a sync(2) that follows the tool, so every tool's files are on disk when it stops,
    and the kernel threads' CPU over that span is returned (the writeback the tool left to the
    kernel; Ferry fsyncs in its own threads, so its rusage has it already). Raises on failure."""
    if before:
        before()
    if durable:
        os.sync()
        k0 = kernel_threads_cpu()
    s0 = server.cpu() if server else None
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if durable:
        os.sync()
    secs = time.perf_counter() - start
    kcpu = kernel_threads_cpu_since(k0) if durable else None
    scpu = server.cpu() - s0 if server else None
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err[-2000:]}")
    return secs, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime, kcpu, scpu


def summarize(name, runs):
    out = {"tool": name, "seconds": statistics.median(r[0] for r in runs),
           "all": [round(r[0], 2) for r in runs], "rss_mib": max(r[1] for r in runs),
           "cpu": statistics.median(r[2] for r in runs)}
    if all(r[3] is not None for r in runs):
        out["kcpu"] = statistics.median(r[3] for r in runs)
    if all(r[4] is not None for r in runs):
        out["scpu"] = statistics.median(r[4] for r in runs)
    return out


def measure(name, cmd, env, repeats, before=None, durable=False):
    return summarize(name, [timed(cmd, env, before, durable) for _ in range(repeats)])


def measure_alternating(cmds, env, repeats, before=None, durable=False, server=None):
    """Like measure() for several tools ({name: cmd}), taking turns (ferry, peer, ..., ferry,
    peer, ...) so that load from other work on the machine falls on every tool alike. server:
    an Rgw whose daemons' CPU over each run is reported too."""
    runs = {name: [] for name in cmds}
    for _ in range(repeats):
        for name, cmd in cmds.items():
            runs[name].append(timed(cmd, env, before, durable, server))
    return [summarize(name, rs) for name, rs in runs.items()]


def print_table(title, amount, results, unit=1 << 20, rate_name="MiB/s", cpu_per=None):
    """Prints the rate (amount / unit per second: MiB/s by default, or e.g. files/s with
    unit=1), peak RSS, each tool's speed relative to Ferry (peer time / ferry time) and, when the
    results have it, client CPU (user+system seconds) per cpu_per = (divisor, label), by default
    per GiB of `amount`, with Ferry's CPU relative to the most frugal peer's, and the server's
    CPU over each tool's runs (its share of the machine, when the server shares the cores)."""
    ferry = next(r for r in results if r["tool"] == "ferry")
    with_cpu = all("cpu" in r for r in results)
    with_k = with_cpu and all("kcpu" in r for r in results)
    with_s = all("scpu" in r for r in results)
    per, per_label = cpu_per or (amount / (1 << 30), "CPU s/GiB")
    print(f"\n### {title}")
    cpu_head = f" CPU s | {per_label} |" if with_cpu else ""
    if with_k:  # durable runs: the kernel threads' CPU (writeback left to them) is added
        cpu_head = f" CPU s | kernel threads CPU s | {per_label} (both) |"
    if with_s:
        cpu_head += " server CPU s |"
    print(f"| tool | median s | runs | {rate_name} | peak RSS MiB | ferry speed-up |{cpu_head}")
    print("|---|---:|---|---:|---:|---:|" + ("---:|" * cpu_head.count("|")))
    total = (lambda r: r["cpu"] + r["kcpu"]) if with_k else (lambda r: r["cpu"])
    for r in results:
        rate = amount / unit / r["seconds"]
        ratio = r["seconds"] / ferry["seconds"]
        cpu = f" {r['cpu']:.2f} | {total(r) / per:.3f} |" if with_cpu else ""
        if with_k:
            cpu = f" {r['cpu']:.2f} | {r['kcpu']:.2f} | {total(r) / per:.3f} |"
        if with_s:
            cpu += f" {r['scpu']:.2f} |"
        print(f"| {r['tool']} | {r['seconds']:.2f} | {r['all']} | {rate:,.0f} | {r['rss_mib']:.0f} | "
              f"{'—' if r is ferry else f'{ratio:.2f}x'} |{cpu}")
    peers = [r for r in results if not r["tool"].startswith("ferry")]
    if with_cpu and peers:
        best = min(peers, key=total)
        what = "CPU incl. kernel threads" if with_k else "CPU"
        for r in results:
            if r["tool"].startswith("ferry"):
                print(f"\n{r['tool']} {what} / least peer's ({best['tool']}): "
                      f"{total(r) / total(best):.2f}x")
    sys.stdout.flush()
