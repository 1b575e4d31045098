"""`run.log_image` of ferry.track against a real `ferry serve`: numpy arrays and torch tensors
(HWC, CHW, grayscale, floats) become PNGs whose pixels decode back exactly, files and encoded
bytes are uploaded as they are, bad keys/shapes/types are one-line errors, and an image logged
while the server is down waits in the spool until `sync` uploads it."""
import json
import pathlib
import struct
import sys
import urllib.request
import warnings
import zlib

import numpy as np
import pytest
import torch

from serve_helpers import ServeProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import ferry.track as track  # noqa: E402

ARTIFACTS = "/api/2.0/mlflow-artifacts/artifacts"


@pytest.fixture(autouse=True)
def no_tracking_env(monkeypatch):
    for name in ("MLFLOW_TRACKING_URI", "FERRY_TRACK_URL", "MLFLOW_RUN_ID", "MLFLOW_TRACKING_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def decode_png(data):
    """A tiny PNG reader for what encode_png writes (8-bit, filter 0): returns an HWC array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = header[:4]
    channels = {0: 1, 2: 3, 6: 4}[color]
    raw = zlib.decompress(idat)
    stride = 1 + width * channels
    rows = [raw[y * stride:(y + 1) * stride] for y in range(height)]
    assert depth == 8 and all(r[0] == 0 for r in rows)
    return np.frombuffer(b"".join(r[1:] for r in rows), np.uint8).reshape(height, width, channels)


def fetch(url, remote):
    with urllib.request.urlopen(f"{url}{ARTIFACTS}/{remote}", timeout=30) as r:
        return r.read()


def listing(url, path):
    with urllib.request.urlopen(f"{url}{ARTIFACTS}?path={path}", timeout=30) as r:
        return json.load(r).get("files", [])


def test_arrays_tensors_files_and_bytes_upload_and_decode_exactly(ferry_bin, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    s = ServeProcess(ferry_bin, data)
    try:
        run = track.init(project="images", url=s.url, spool_dir=tmp_path / "spool")
        rgb = np.arange(24 * 32 * 3, dtype=np.uint8).reshape(24, 32, 3)
        chw = torch.linspace(0, 1, 3 * 8 * 5).reshape(3, 8, 5)       # float CHW, as torch keeps it
        gray = np.eye(7, dtype=bool)
        run.log({"loss": 1.0}, step=7)
        names = [run.log_image(rgb, key="samples/input", step=3),
                 run.log_image(chw, key="pred"),                       # the run's current step: 7
                 run.log_image(gray, key="mask", step=9)]
        png_file = tmp_path / "plot.png"
        png_file.write_bytes(track.encode_png(rgb[:4, :4]))
        names.append(run.log_image(png_file, key="plots", step=1))
        jpeg = b"\xff\xd8\xff\xe0" + b"\0" * 100                      # uploaded as is, not decoded
        names.append(run.log_image(jpeg, key="photo", step=2))
        assert names == ["images/samples/input/step-00000003.png", "images/pred/step-00000007.png",
                         "images/mask/step-00000009.png", "images/plots/step-00000001.png",
                         "images/photo/step-00000002.jpg"]
        run.finish()
        base = run.artifact_uri.removeprefix("mlflow-artifacts:/")
        assert (decode_png(fetch(s.url, f"{base}/{names[0]}")) == rgb).all()
        expected = (chw.numpy().transpose(1, 2, 0) * 255 + 0.5).astype(np.uint8)
        assert (decode_png(fetch(s.url, f"{base}/{names[1]}")) == expected).all()
        assert (decode_png(fetch(s.url, f"{base}/{names[2]}"))[:, :, 0] == gray * 255).all()
        assert fetch(s.url, f"{base}/{names[3]}") == png_file.read_bytes()
        assert fetch(s.url, f"{base}/{names[4]}") == jpeg
        assert [f["path"] for f in listing(s.url, f"{base}/images")] == \
            ["mask", "photo", "plots", "pred", "samples"]
        assert not (tmp_path / "spool").exists(), "uploaded images leave the spool"
    finally:
        s.stop()


def test_bad_keys_shapes_and_types_are_errors_naming_the_cause(tmp_path):
    run = track.init(project="x", offline=True, spool_dir=tmp_path / "spool")
    ok = np.zeros((2, 2, 3), np.uint8)
    for key in ("../etc", "a//b", "", "a/./b", "bad?key"):
        with pytest.raises(ValueError, match="image key"):
            run.log_image(ok, key=key)
    with pytest.raises(ValueError, match="HW, HWC or CHW"):
        run.log_image(np.zeros((2, 2, 5), np.uint8))
    with pytest.raises(ValueError, match="not PNG, JPEG or GIF"):
        run.log_image(b"hello")
    with pytest.raises(ValueError, match="not a .png"):
        run.log_image(tmp_path / "notes.txt")
    with pytest.raises(TypeError, match="cannot log an image of type dict"):
        run.log_image({"a": 1})
    with pytest.raises(TypeError, match="step must be an int"):
        run.log_image(ok, step=-1)
    run.finish()


def test_image_logged_while_the_server_is_down_waits_in_the_spool_until_sync(ferry_bin, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    first = ServeProcess(ferry_bin, data)
    run = track.init(project="outage-images", url=first.url, spool_dir=tmp_path / "spool")
    first.stop()
    image = np.full((6, 4, 3), 200, np.uint8)
    name = run.log_image(image, key="late", step=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run.finish(timeout=2)
    assert sorted(p.suffix for p in (tmp_path / "spool").iterdir() if p.suffix in (".bin", ".name")) \
        == [".bin", ".name"]
    again = ServeProcess(ferry_bin, data)
    try:
        assert track.sync(tmp_path / "spool", again.url) == [run.run_id]
        base = run.artifact_uri.removeprefix("mlflow-artifacts:/")
        assert (decode_png(fetch(again.url, f"{base}/{name}")) == image).all()
        assert not (tmp_path / "spool").exists()
    finally:
        again.stop()


def test_ferry_track_sync_uploads_an_offline_run_with_points_images_and_status(ferry_bin, tmp_path):
    """The `ferry track sync` verb (C++, tracker/client/spool_sync.h) does what
    `python3 -m ferry.track sync` does: an offline run with params, points (NaN included), an
    image and exit code 2 becomes a FAILED run on the server, and the spool is removed."""
    import math
    import subprocess
    spools = tmp_path / "spools"
    run = track.init(project="offline-cli", name="off", config={"lr": 0.5, "opt": {"name": "sgd"}},
                     offline=True, spool_dir=spools / "r1")
    for step in range(1500):
        run.log({"loss": 1.0 / (step + 1), "odd": math.nan if step == 7 else step})
    image = np.full((3, 5, 3), 77, np.uint8)
    name = run.log_image(image, key="samples", step=1499)
    run.finish(exit_code=2)
    data = tmp_path / "data"
    data.mkdir()
    s = ServeProcess(ferry_bin, data)
    try:
        bad = subprocess.run([ferry_bin, "track", "sync", str(tmp_path / "nothing")],
                             capture_output=True, text=True, timeout=60,
                             env={"PATH": "/usr/bin:/bin", "MLFLOW_TRACKING_URI": s.url})
        assert bad.returncode != 0 and "holds no spooled run" in bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        p = subprocess.run([ferry_bin, "track", "sync", str(spools), "--url", s.url],
                           capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
        assert p.returncode == 0, p.stderr
        (run_id,) = p.stdout.split()
        assert not (spools / "r1").exists()
        body = json.load(urllib.request.urlopen(
            f"{s.url}/api/2.0/mlflow/runs/get?run_id={run_id}", timeout=30))["run"]
        assert body["info"]["status"] == "FAILED" and body["info"]["run_name"] == "off"
        assert {x["key"]: x["value"] for x in body["data"]["params"]} == {"lr": "0.5", "opt.name": "sgd"}
        tags = {t["key"]: t["value"] for t in body["data"]["tags"]}
        assert tags["ferry.exit_code"] == "2" and tags["ferry.host"] and float(tags["summary.odd"]) == 1499
        hist = json.load(urllib.request.urlopen(
            f"{s.url}/api/2.0/mlflow/metrics/get-history?run_id={run_id}&metric_key=odd", timeout=30))
        values = [m["value"] for m in hist["metrics"]]
        assert len(values) == 1500 and values[7] == "NaN" or math.isnan(float(values[7]))
        base = body["info"]["artifact_uri"].removeprefix("mlflow-artifacts:/")
        assert (decode_png(fetch(s.url, f"{base}/{name}")) == image).all()
    finally:
        s.stop()
