"""Test-only: makes fork() safe enough for python children that preload GCC 12's ASan runtime.

The CLI tests run /usr/bin/python3 with libasan preloaded (the ASan build's ferry._native needs
it). GCC 12's libasan (LLVM's runtime as of 2022) does not lock its allocator around fork(): a
child forked while another thread of the parent held an allocator lock (a thread refilling its
cache, or exiting) inherits the lock held and waits forever at its first allocation from that
size class. PyTorch's DataLoader workers hit it (test_loader_state.py hung one CI run for 300 s:
the worker's main thread in at::set_num_threads -> pthreadpool_create, the new thread blocked in
SizeClassAllocator64::GetFromAllocator). Newer LLVM runtimes lock the allocator around fork;
Debian 12's GCC runtime does not, and clang 19's runtime refuses to start under Debian's non-PIE
python3 ("Shadow memory range interleaves with an existing memory mapping").

Before each fork this waits (at most 2 s) until every other thread of the process is asleep
(state S or I in /proc/self/task/*/stat): a thread that holds an allocator lock is running, not
asleep. conftest.python_env puts this directory first on PYTHONPATH only when it preloads ASan;
release builds and users never see it.
"""
import os
import threading
import time


def _others_asleep():
    me = str(threading.get_native_id())
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return True
    for tid in tids:
        if tid == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # it exited
        if stat[stat.rindex(")") + 2] not in "SI":
            return False
    return True


def _quiesce():
    deadline = time.monotonic() + 2
    while not _others_asleep() and time.monotonic() < deadline:
        time.sleep(0.0005)


os.register_at_fork(before=_quiesce)
