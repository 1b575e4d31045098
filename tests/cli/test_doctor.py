"""ferry doctor on real mounts available here: tmpfs, an overlay (a container's writable layer)
made by the test, a FUSE mount (rclone mount of a local dir), and the local disk."""
import json
import subprocess

import pytest

from conftest import one_line_error


def doctor(ferry, *args):
    p = ferry.run("doctor", "--json", *args)
    assert p.returncode == 0, p.stderr.decode()
    return [json.loads(line) for line in p.stdout.decode().splitlines()]


@pytest.fixture
def mounted(tmp_path):
    done = []

    def mount(*args):
        target = args[-1]
        if subprocess.run(["mount", *map(str, args)], capture_output=True).returncode != 0:
            pytest.skip(f"cannot mount {args} (needs root)")
        done.append(target)
        return target

    yield mount
    for t in reversed(done):
        subprocess.run(["umount", "-l", str(t)])


def test_tmpfs_is_ram(ferry, tmp_path, mounted):
    mnt = tmp_path / "ram"
    mnt.mkdir()
    mounted("-t", "tmpfs", "-o", "size=64m", "tmpfs", mnt)
    (d,) = doctor(ferry, "--no-bench", mnt)
    assert d["persistence"] == "ram" and d["kind"] == "tmpfs (RAM)"
    assert d["mount"]["mount_point"] == str(mnt)
    assert 0 < d["total_bytes"] <= 64 * 1024 * 1024


def test_overlay_is_the_container_layer_and_measures_speed(ferry, tmp_path, mounted):
    for d in ("lower", "upper", "work", "merged"):
        (tmp_path / d).mkdir()
    mounted("-t", "overlay", "overlay", "-o",
            f"lowerdir={tmp_path/'lower'},upperdir={tmp_path/'upper'},workdir={tmp_path/'work'}",
            tmp_path / "merged")
    (tmp_path / "merged" / "output").mkdir()
    (d,) = doctor(ferry, tmp_path / "merged" / "output")
    assert d["persistence"] == "container"
    assert "lost when the container exits" in d["verdict"]
    assert d["small_file_ops_per_s"] > 0 and d["seq_write_mib_s"] > 0
    assert not any(p.name.startswith(".ferry-doctor") for p in (tmp_path / "merged" / "output").iterdir())


def test_a_real_fuse_mount_names_its_driver(ferry, tmp_path):
    src, mnt = tmp_path / "src", tmp_path / "fuse"
    src.mkdir()
    mnt.mkdir()
    # rclone mount of a local directory: a real FUSE mount (fuse.rclone) without any server.
    p = subprocess.run(["rclone", "mount", str(src), str(mnt), "--daemon", "--daemon-timeout", "30s"],
                       capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    try:
        (d,) = doctor(ferry, "--no-bench", mnt)
        assert d["kind"] == "FUSE (rclone)" and d["persistence"] == "network"
        assert d["mount"]["fstype"] == "fuse.rclone"
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)])


def test_human_output_and_errors(ferry, tmp_path):
    p = ferry.run("doctor", "--no-bench", tmp_path)
    assert p.returncode == 0
    out = p.stdout.decode()
    assert "persistence:" in out and "space:" in out
    p = ferry.run("doctor", tmp_path / "missing")
    assert p.returncode == 1
    assert "missing" in one_line_error(p)


def test_s3_url_reports_endpoint_credentials_and_probes(ferry, prefix, rgw):
    (d,) = doctor(ferry, prefix)
    assert d["endpoint"] == rgw["FERRY_TEST_S3_ENDPOINT"]
    assert "environment variables" in d["credentials"]
    assert d["listable"] and d["writable"] and d["list_latency_ms"] > 0 and d["write_mib_s"] > 0
    assert not d["errors"]
    # The probe object is gone again.
    assert ferry.run("ls", "-r", prefix).stdout == b""


def test_s3_url_with_bad_secret_names_the_problem(ferry, prefix):
    p = ferry.run("doctor", "--no-bench", prefix, env={"AWS_SECRET_ACCESS_KEY": "bad-secret-value-x"})
    assert p.returncode == 1
    out = p.stdout.decode()
    assert "SignatureDoesNotMatch" in out and "bad-secret-value-x" not in out + p.stderr.decode()
