"""ferry run before the command starts, and what the command is given: mistakes in inputs and
outputs caught before anything is created (usage errors and preflight), the TMPDIR warning, and
the descriptors the command inherits."""
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import base_env
from run_helpers import run_args


# --- Issue 12: mistakes caught before anything is created or started --------------------------

def run_in(ferry, cwd, *args):
    return subprocess.run([ferry.binary, *map(str, args)], env=base_env(ferry.rgw), cwd=cwd,
                          capture_output=True, timeout=60)


def test_swapped_sides_are_one_line_usage_errors_that_show_the_right_order(ferry, prefix, tmp_path):
    from conftest import one_line_error
    marker = tmp_path / "ran"
    p = run_in(ferry, tmp_path, "run", "--out", f"{prefix}x/={tmp_path}/scratch/out", "--", "touch", marker)
    assert p.returncode == 2
    err = one_line_error(p)
    assert "the sides look swapped" in err and f"write --out {tmp_path}/scratch/out={prefix}x/" in err, err
    p = run_in(ferry, tmp_path, "run", "--in", f"{tmp_path}/data={prefix}ds", "--out",
               f"{tmp_path}/o={prefix}", "--", "touch", marker)
    assert p.returncode == 2
    err = one_line_error(p)
    assert "the sides look swapped" in err and f"write --in {prefix}ds={tmp_path}/data" in err, err
    # The same mistake in a spec file, with a relative local side: no 's3:' directory either.
    spec = tmp_path / "job.yaml"
    spec.write_text(f'outputs: [{{dir: "{prefix}x/", dst: "scratch/out"}}]\ncommand: [touch, {marker}]\n')
    p = run_in(ferry, tmp_path, "run", "--spec", spec)
    assert p.returncode == 2 and "the sides look swapped" in one_line_error(p)
    assert not marker.exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["job.yaml"]  # nothing was created


@pytest.mark.parametrize("in_dir,out_dir,says", [
    ("data", "data/out", "is inside the input directory"),
    ("out/data", "out", "is inside the output directory"),
    ("same", "same/", "name the same directory"),
])
def test_input_and_output_dirs_must_not_nest(ferry, prefix, tmp_path, in_dir, out_dir, says):
    from conftest import one_line_error
    marker = tmp_path / "ran"
    for extra in ([], ["--no-preflight"]):  # not a preflight check: it cannot be skipped
        p = run_in(ferry, tmp_path, "run", *extra, "--in", f"{prefix}ds/={tmp_path / in_dir}",
                   "--out", f"{tmp_path / out_dir}={prefix}runs/", "--", "touch", marker)
        assert p.returncode == 2
        assert says in one_line_error(p)
    assert not marker.exists()
    assert list(tmp_path.iterdir()) == []


def test_fleeting_output_without_a_remote_destination_fails_the_preflight(ferry, tmp_path):
    import uuid
    shm = pathlib.Path("/dev/shm") / f"ferry-test-{uuid.uuid4().hex[:8]}"  # tmpfs: RAM
    marker = tmp_path / "ran"
    try:
        p = ferry.run("run", "--out", f"{shm}/out={shm}/results/", "--", "touch", marker)
        err = p.stderr.decode()
        assert p.returncode == 1, err
        errors = [line for line in err.splitlines() if "error:" in line]
        assert len(errors) == 2, err  # the preflight's line, then "preflight failed"
        assert (f"output {shm}/out: it is on tmpfs (RAM) and its destination {shm}/results/ is local and "
                "on tmpfs (RAM): the results would not outlive the job") in errors[0]
        assert "preflight failed" in errors[1]
        assert not marker.exists() and not (shm / "out").exists()
        # A persistent output dir with that destination only gets the warning it always got.
        p = ferry.run("run", "--out", f"{tmp_path}/out={shm}/results/", "--", "true")
        err = p.stderr.decode()
        assert p.returncode == 0, err
        assert f"warning: output destination {shm}/results/ is on tmpfs (RAM)" in err
        # A fleeting output dir whose destination persists is what ferry run is for.
        p = ferry.run("run", "--out", f"{shm}/out2={tmp_path}/results/", "--", "true")
        assert p.returncode == 0, p.stderr.decode()
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def test_a_tmpdir_too_long_for_unix_sockets_is_warned_about(ferry, prefix, tmp_path):
    """Python's multiprocessing makes its Unix sockets under TMPDIR (PyTorch's DataLoader workers
    hand tensors over through one); past 75 characters the bind fails inside a queue feeder
    thread, the batch is dropped and training waits forever. The preflight says so."""
    long_tmp = tmp_path / ("t" * max(1, 80 - len(str(tmp_path))))
    long_tmp.mkdir()
    assert len(str(long_tmp)) > 75
    p = ferry.run(*run_args(tmp_path, prefix, "exit 0"), env={"TMPDIR": str(long_tmp)})
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert f"TMPDIR '{long_tmp}' is {len(str(long_tmp))} characters" in err, err
    assert "set a shorter TMPDIR" in err
    p = ferry.run(*run_args(tmp_path, prefix + "short/", "exit 0"), env={"TMPDIR": "/tmp"})
    assert p.returncode == 0 and b"shorter TMPDIR" not in p.stderr


def test_the_command_inherits_only_the_descriptors_ferry_was_given(ferry, prefix, tmp_path):
    """The command sees what ferry's caller handed down (a descriptor passed here) and nothing
    that ferry opened itself: libcurl's sockets to S3 and ferry's own pipes used to leak into the
    training process and every DataLoader worker."""
    listing = tmp_path / "fds.txt"
    passed = os.open(os.devnull, os.O_RDONLY)
    try:
        p = subprocess.run([ferry.binary, *map(str, run_args(tmp_path, prefix,
                                                            f"ls -l /proc/$$/fd > {listing}"))],
                           env=base_env(ferry.rgw), pass_fds=(passed,), capture_output=True,
                           timeout=120)
    finally:
        os.close(passed)
    assert p.returncode == 0, p.stderr.decode()
    fds = {}
    for line in listing.read_text().splitlines()[1:]:
        name, _, target = line.split()[-3:]
        fds[int(name)] = target
    assert fds.get(passed) == "/dev/null", fds
    extra = {fd: t for fd, t in fds.items() if fd > 2 and fd != passed and not t.startswith("/proc/")}
    assert extra == {}, fds
