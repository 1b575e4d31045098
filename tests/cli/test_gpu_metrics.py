"""GPU metrics through NVML on a machine without a GPU: the stand-in libnvidia-ml.so.1
(src/sysmetrics/testing/nvml_standin.cc, NVML's documented ABI and return codes) is found the
way the real one is, by dlopen of the soname through the library path. `ferry sysmetrics` and
`ferry run --track` then report each GPU, leave out what a GPU does not support, and treat a
driver that fails to start as "no GPU metrics", not as an error (docs/semantics/run.md)."""
import json
import os
import pathlib
import subprocess

import pytest

import test_run_track
from serve_helpers import minimal_env
from test_run_track import ferry_run, env_for, history, run_info, TRACKED_SCRIPT

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def standin_dir():
    lib = os.environ.get("FERRY_NVML_STANDIN") or str(
        ROOT / "build/dev/src/sysmetrics/nvml-standin/libnvidia-ml.so.1")
    if not os.path.exists(lib):
        pytest.fail(f"NVML stand-in not found at {lib}; build target nvml_standin or set "
                    "FERRY_NVML_STANDIN")
    return str(pathlib.Path(lib).parent)


def sysmetrics(ferry_bin, env):
    p = subprocess.run([ferry_bin, "sysmetrics", "--json", "--wait", "200"], env=env,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def test_sysmetrics_reports_each_gpu_through_nvml(ferry_bin, standin_dir):
    env = minimal_env()
    env["LD_LIBRARY_PATH"] = standin_dir
    out = sysmetrics(ferry_bin, env)
    assert out["gpus"] == "2 GPU(s) through libnvidia-ml.so.1"
    m = out["metrics"]
    assert m["system/gpu_0_utilization_percentage"] == 40
    assert m["system/gpu_0_memory_usage_percentage"] == 5
    assert m["system/gpu_0_power_usage_watts"] == 300.5
    assert m["system/gpu_1_temperature_celsius"] == 51
    assert "system/gpu_1_power_usage_watts" not in m  # NOT_SUPPORTED: left out, not 0


def test_a_driver_that_does_not_start_is_no_gpu_metrics(ferry_bin, standin_dir):
    env = minimal_env()
    env.update(LD_LIBRARY_PATH=standin_dir, FERRY_NVML_STANDIN_INIT="9")
    out = sysmetrics(ferry_bin, env)
    assert "nvmlInit_v2 failed (NVML error 9" in out["gpus"]
    assert not any(k.startswith("system/gpu_") for k in out["metrics"])
    assert "system/cpu_utilization_percentage" in out["metrics"]


server = test_run_track.server  # the `ferry serve` fixture


def test_a_tracked_run_has_gpu_metrics_beside_the_scripts(ferry_bin, server, tmp_path,
                                                         standin_dir):
    env = env_for(tmp_path, LD_LIBRARY_PATH=standin_dir)
    p = ferry_run(ferry_bin, tmp_path, server.url, TRACKED_SCRIPT, env=env)
    assert p.returncode == 0, p.stderr.decode()
    run_id = json.loads((tmp_path / "info.json").read_text())["MLFLOW_RUN_ID"]
    assert run_info(server.url, run_id)["info"]["status"] == "FINISHED"
    util = history(server.url, run_id, "system/gpu_1_utilization_percentage")
    assert len(util) >= 2 and {m["value"] for m in util} == {50}
    assert {m["value"] for m in history(server.url, run_id, "system/gpu_0_power_usage_watts")} \
        == {300.5}
    assert history(server.url, run_id, "system/gpu_1_power_usage_watts") == []
    assert [m["value"] for m in history(server.url, run_id, "loss")][0] == 1.0
