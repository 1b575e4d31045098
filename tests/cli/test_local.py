"""ferry ls/stat/cat/cp/rm on local paths: the embedded default store, no server."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import ASAN_OPTIONS, base_env, one_line_error


def test_cp_ls_stat_cat_rm_round_trip(ferry, tmp_path):
    src = tmp_path / "src" / "data.bin"
    src.parent.mkdir()
    payload = os.urandom(3 * 1024 * 1024 + 17)
    src.write_bytes(payload)
    dst_dir = tmp_path / "dst"
    assert ferry.run("cp", src, f"{dst_dir}/").returncode == 0
    assert (dst_dir / "data.bin").read_bytes() == payload
    out = ferry.run("ls", dst_dir, check=True).stdout.decode()
    assert out == "data.bin\n"
    st = json.loads(ferry.run("stat", "--json", dst_dir / "data.bin", check=True).stdout)
    assert st["size"] == len(payload)
    part = ferry.run("cat", "--range", "10-19", dst_dir / "data.bin", check=True).stdout
    assert part == payload[10:20]
    assert ferry.run("rm", dst_dir / "data.bin").returncode == 0
    assert not (dst_dir / "data.bin").exists()


def test_ls_shows_directories_and_recursive_listing(ferry, tmp_path):
    for name in ["a/1", "a/b/2", "c"]:
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(name)
    assert ferry.run("ls", tmp_path, check=True).stdout.decode() == "a/\nc\n"
    assert ferry.run("ls", "-r", tmp_path, check=True).stdout.decode() == "a/1\na/b/2\nc\n"
    lines = ferry.run("ls", "--json", "-r", tmp_path, check=True).stdout.decode().splitlines()
    assert [json.loads(l)["size"] for l in lines] == [3, 5, 1]


def test_file_urls_and_relative_paths(ferry, tmp_path):
    (tmp_path / "a b.txt").write_text("space")
    assert ferry.run("cat", f"file://{tmp_path}/a%20b.txt", check=True).stdout == b"space"
    p = subprocess.run([ferry.binary, "cat", "a b.txt"], cwd=tmp_path, capture_output=True)
    assert p.stdout == b"space"


def test_missing_file_is_one_line_error_naming_it(ferry, tmp_path):
    p = ferry.run("cat", tmp_path / "nope.txt")
    assert p.returncode == 1
    err = one_line_error(p)
    assert "nope.txt" in err and "No such file" in err
    p = ferry.run("ls", tmp_path / "nothing")
    assert p.returncode == 1
    assert "nothing" in one_line_error(p)


def test_failed_copy_leaves_nothing_at_destination(ferry, tmp_path):
    p = ferry.run("cp", tmp_path / "missing.bin", tmp_path / "out.bin")
    assert p.returncode == 1
    assert list(tmp_path.iterdir()) == []


def test_usage_errors_exit_2(ferry, tmp_path):
    assert ferry.run().returncode == 2
    assert ferry.run("frobnicate").returncode == 2
    assert ferry.run("cat", "--range", "9-1", tmp_path / "x").returncode == 2
    p = ferry.run("ls", "gs://bucket/key")
    assert p.returncode == 2
    assert "unknown URL scheme 'gs'" in one_line_error(p)


def test_rm_recursive_refuses_root_and_deletes_tree(ferry, tmp_path):
    (tmp_path / "t" / "x").mkdir(parents=True)
    (tmp_path / "t" / "x" / "f").write_text("1")
    (tmp_path / "t" / "g").write_text("2")
    assert ferry.run("rm", "-r", "-q", tmp_path / "t", check=True).stdout == b""
    assert not (tmp_path / "t" / "g").exists() and not (tmp_path / "t" / "x" / "f").exists()
    assert ferry.run("rm", "-r", "/").returncode == 2


@pytest.fixture
def tiny_fs(tmp_path):
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)]).returncode != 0:
        pytest.skip("cannot mount tmpfs (needs root)")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)])


def test_full_disk_fails_clearly_and_leaves_no_partial_file(ferry, tmp_path, tiny_fs):
    src = tmp_path / "big.bin"
    src.write_bytes(os.urandom(3 * 1024 * 1024))
    p = ferry.run("cp", src, tiny_fs / "big.bin")
    assert p.returncode == 1
    err = one_line_error(p)
    assert "No space left" in err and "big.bin" in err
    assert list(tiny_fs.iterdir()) == []


def test_output_closed_by_its_reader_ends_quietly(ferry, tmp_path):
    """`ferry ls | head -1`: the closed pipe ends ferry with exit 0 and nothing on stderr (the
    CLI knows the output was closed from Print(), not from an error message's text)."""
    stem = "n" * 120  # 2000 lines of 126 bytes: more than a pipe holds
    for i in range(2000):
        (tmp_path / f"{stem}{i:05d}").write_text("x")
    p = subprocess.Popen([ferry.binary, "ls", str(tmp_path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=base_env(ferry.rgw))
    assert p.stdout.readline() == f"{stem}00000\n".encode()
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=60) == 0
    assert err == b""


def test_large_local_copy_direct_io_and_its_switch(ferry, tmp_path):
    """Big files go to ext4/xfs with O_DIRECT (docs/semantics/copy.md, Atomicity): the copy is
    exact with the default and with FERRY_DIRECT_IO=off; a bad value is a one-line error naming
    the variable and writes nothing."""
    src = tmp_path / "ckpt.bin"
    data = os.urandom((40 << 20) + 5)  # parallel parts and a last partial block
    src.write_bytes(data)
    for setting in ("auto", "off"):
        dst = tmp_path / setting / "ckpt.bin"
        ferry.run("cp", src, dst, env={"FERRY_DIRECT_IO": setting}, check=True)
        assert dst.read_bytes() == data, setting
    fs = subprocess.run(["stat", "-f", "-c", "%T", str(tmp_path)], capture_output=True,
                        text=True).stdout.strip()
    if shutil.which("strace") and fs in ("ext2/ext3", "xfs"):  # ext4 reads as ext2/ext3 here
        trace = tmp_path / "trace.txt"
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", str(trace),
                        ferry.binary, "cp", str(src), str(tmp_path / "traced.bin")],
                       env=base_env(ferry.rgw, ASAN_OPTIONS=f"{ASAN_OPTIONS}:detect_leaks=0"),  # no LSan under ptrace
                       check=True, capture_output=True)
        assert "O_DIRECT" in trace.read_text()
        assert (tmp_path / "traced.bin").read_bytes() == data
    p = ferry.run("cp", src, tmp_path / "bad" / "ckpt.bin", env={"FERRY_DIRECT_IO": "maybe"})
    assert p.returncode == 1
    assert "FERRY_DIRECT_IO='maybe': expected auto or off" in one_line_error(p)
    assert not (tmp_path / "bad").exists()


def test_large_file_named_in_latin1_is_copied_and_its_journal_removed(ferry, tmp_path):
    """A file large enough for parallel parts (and a resume journal) whose name is not UTF-8: the
    journal's JSON used to abort the copy (nlohmann's type_error 316), leaving a .journal.new."""
    name = os.fsdecode(b"weights-\xe9t\xe9.bin")
    (tmp_path / "src").mkdir()
    data = os.urandom(70 << 20)
    (tmp_path / "src" / name).write_bytes(data)
    state = tmp_path / "state"
    p = ferry.run("cp", "-r", tmp_path / "src", tmp_path / "dst", env={"FERRY_STATE_DIR": str(state)})
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert (tmp_path / "dst" / name).read_bytes() == data
    assert os.listdir(tmp_path / "dst") == [name]
    assert not list(state.rglob("*.journal*"))
