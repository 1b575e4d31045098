"""MLflow 3 clients against `ferry serve` (issue 31): the REST sequences MLflow 3.x's Python
client sends (mlflow/store/tracking/rest_store.py, mlflow/tracking/_tracking_service/client.py,
mlflow/store/artifact/runs_artifact_repo.py, read at mlflow/mlflow master, late 2026), replayed
byte for byte over a real socket, on SQLite and PostgreSQL. The real client is not installable
here (no PyPI); these replays follow its source call by call.
"""
import hashlib
import json
import os
import urllib.parse

import pytest

from pg_helpers import new_database
from test_mlflow_api import Tracker

API = "/api/2.0/mlflow/"
ARTIFACTS = "/api/2.0/mlflow-artifacts/artifacts"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def tracker(request, ferry_bin, tmp_path_factory):
    extra = ["--tracker-db", new_database()] if request.param == "postgres" else []
    t = Tracker(ferry_bin, tmp_path_factory.mktemp("mlflow3") / "data", *extra)
    yield t
    t.stop()


def ok(tracker, method, endpoint, body=None):
    status, raw = tracker.request(API + endpoint, method, body if body is not None else b"")
    assert status == 200, (method, endpoint, raw)
    return json.loads(raw) if raw else {}


def artifact_path(uri):
    """mlflow-artifacts:/1/models/m-x/artifacts -> 1/models/m-x/artifacts (the client's
    MlflowArtifactsRepository strips the scheme and resolves against the tracking server)."""
    assert uri.startswith("mlflow-artifacts:/"), uri
    return uri[len("mlflow-artifacts:/"):].lstrip("/")


def list_dir(tracker, path):
    status, raw = tracker.request(ARTIFACTS + "?" + urllib.parse.urlencode({"path": path}))
    assert status == 200, raw
    return json.loads(raw).get("files", [])


def log_model(tracker, experiment_id, run_id, name, files):
    """mlflow.pytorch.log_model(model, name=name) in MLflow 3: create the LoggedModel, upload its
    files under its artifact_location, finalize, record it as the run's output."""
    created = ok(tracker, "POST", "logged-models", {
        "experiment_id": experiment_id, "name": name, "model_type": "pytorch",
        "source_run_id": run_id, "params": [{"key": "lr", "value": "0.001"}],
        "tags": [{"key": "mlflow.source.name", "value": "train.py"}]})
    model = created["model"]["info"]
    got = ok(tracker, "GET", "logged-models/" + model["model_id"])["model"]["info"]
    base = artifact_path(got["artifact_uri"])
    for rel, data in files.items():
        status, raw = tracker.request(f"{ARTIFACTS}/{base}/{rel}", "PUT", data,
                                      headers={"Content-Type": "application/octet-stream"})
        assert status == 200, raw
    final = ok(tracker, "PATCH", "logged-models/" + model["model_id"],
               {"model_id": model["model_id"], "status": "LOGGED_MODEL_READY"})
    assert final["model"]["info"]["status"] == "LOGGED_MODEL_READY"
    ok(tracker, "POST", "runs/outputs",
       {"run_id": run_id, "models": [{"model_id": model["model_id"], "step": 0}]})
    return model


def client_list_artifacts(tracker, run_id, path):
    """MlflowClient().list_artifacts(run_id, path) in MLflow 3: the run's own files, then the
    logged model whose name is path's first component (RunsArtifactRepository
    ._list_model_artifacts), its files prefixed with the model's name."""
    run = ok(tracker, "GET", "runs/get?" + urllib.parse.urlencode({"run_id": run_id}))["run"]
    files = [dict(f, path=f"{path}/{f['path'].rsplit('/', 1)[-1]}")
             for f in list_dir(tracker, artifact_path(run["info"]["artifact_uri"]) + "/" + path)]
    model_name, _, rest = path.partition("/")
    token = None
    while True:
        body = {"experiment_ids": [run["info"]["experiment_id"]],
                "filter": f"name = '{model_name}'"}
        if token:
            body["page_token"] = token
        page = ok(tracker, "POST", "logged-models/search", body)
        for m in page.get("models", []):
            if m["info"].get("source_run_id") == run_id:
                base = artifact_path(m["info"]["artifact_uri"]) + ("/" + rest if rest else "")
                # MlflowArtifactsRepository.list_artifacts(rest) answers paths relative to the
                # repository's root (rest/basename); the run's repository prefixes the name.
                prefix = model_name + ("/" + rest if rest else "")
                files += [dict(f, path=f"{prefix}/{f['path'].rsplit('/', 1)[-1]}")
                          for f in list_dir(tracker, base)]
                return files
        token = page.get("next_page_token")
        if not token:
            return files


def test_mlflow3_log_model_then_list_and_download_its_artifacts(tracker):
    exp = ok(tracker, "POST", "experiments/create", {"name": "mlflow3-models"})["experiment_id"]
    run = ok(tracker, "POST", "runs/create",
             {"experiment_id": exp, "start_time": 1, "run_name": "train"})["run"]["info"]["run_id"]
    weights = os.urandom(3 << 20)
    files = {"MLmodel": b"artifact_path: model\nflavors:\n  pytorch: {}\n",
             "data/model.pth": weights, "requirements.txt": b"torch\n"}
    model = log_model(tracker, exp, run, "model", files)
    log_model(tracker, exp, ok(tracker, "POST", "runs/create", {"experiment_id": exp})["run"]
              ["info"]["run_id"], "model", {"MLmodel": b"other run's\n"})

    # The call that raised INTERNAL_ERROR before (the endpoint was missing).
    listed = client_list_artifacts(tracker, run, "model")
    assert sorted(f["path"] for f in listed) == ["model/MLmodel", "model/data",
                                                "model/requirements.txt"], listed
    deeper = client_list_artifacts(tracker, run, "model/data")
    assert deeper == [{"path": "model/data/model.pth", "is_dir": False,
                       "file_size": len(weights)}], deeper

    # mlflow.pyfunc.load_model(f"models:/{model_id}"): get the model, download from its location.
    info = ok(tracker, "GET", "logged-models/" + model["model_id"])["model"]["info"]
    status, raw = tracker.request(f"{ARTIFACTS}/{artifact_path(info['artifact_uri'])}/data/model.pth")
    assert status == 200 and hashlib.sha256(raw).digest() == hashlib.sha256(weights).digest()

    # The run says what it produced; the model says where it came from.
    got = ok(tracker, "GET", "runs/get?run_id=" + run)["run"]
    assert got["outputs"]["model_outputs"] == [{"model_id": model["model_id"], "step": 0}]
    assert info["source_run_id"] == run and info["model_type"] == "pytorch"


def test_mlflow3_search_logged_models_pages_orders_and_refuses_what_it_cannot_answer(tracker):
    exp = ok(tracker, "POST", "experiments/create", {"name": "mlflow3-search"})["experiment_id"]
    ids = [ok(tracker, "POST", "logged-models", {"experiment_id": exp, "name": f"m{i}"})
           ["model"]["info"]["model_id"] for i in range(5)]
    seen, token = [], None
    while True:  # mlflow.search_logged_models(..., order_by=[{"field_name": "name"}]) paging
        body = {"experiment_ids": [exp], "max_results": 2,
                "order_by": [{"field_name": "name", "ascending": False}]}
        if token:
            body["page_token"] = token
        page = ok(tracker, "POST", "logged-models/search", body)
        seen += [m["info"]["name"] for m in page["models"]]
        token = page.get("next_page_token")
        if not token:
            break
    assert seen == ["m4", "m3", "m2", "m1", "m0"]
    status, raw = tracker.request(API + "logged-models/search", "POST",
                                  {"experiment_ids": [exp], "filter": "metrics.acc > 0.5"})
    assert status == 400 and json.loads(raw)["error_code"] == "INVALID_PARAMETER_VALUE", raw
    status, raw = tracker.request(API + "logged-models/search", "POST",
                                  {"experiment_ids": [exp], "filter": "name = 'm1' AND"})
    assert status == 400 and b"\n" not in raw.rstrip(b"\n"), raw
    ok(tracker, "DELETE", "logged-models/" + ids[0])
    status, raw = tracker.request(API + "logged-models/" + ids[0])
    assert status == 404 and json.loads(raw)["error_code"] == "RESOURCE_DOES_NOT_EXIST"


def test_mlflow3_log_input_of_a_pandas_dataset_shows_on_the_run(tracker):
    """mlflow.log_input(mlflow.data.from_pandas(df, source=..., name="train"), context="training")
    sends runs/log-inputs with the dataset's name, digest, source, schema and profile."""
    exp = ok(tracker, "POST", "experiments/create", {"name": "mlflow3-inputs"})["experiment_id"]
    run = ok(tracker, "POST", "runs/create", {"experiment_id": exp})["run"]["info"]["run_id"]
    dataset = {"name": "train", "digest": "5ad3c2f1", "source_type": "local",
               "source": json.dumps({"uri": "/data/train.parquet"}),
               "schema": json.dumps({"mlflow_colspec": [{"type": "double", "name": "x"}]}),
               "profile": json.dumps({"num_rows": 3, "num_elements": 6})}
    body = {"run_id": run, "datasets": [{
        "tags": [{"key": "mlflow.data.context", "value": "training"}], "dataset": dataset}]}
    ok(tracker, "POST", "runs/log-inputs", body)
    ok(tracker, "POST", "runs/log-inputs", body)  # a retried call adds nothing
    got = ok(tracker, "GET", "runs/get?run_id=" + run)["run"]
    assert got["inputs"]["dataset_inputs"] == body["datasets"], got["inputs"]
    found = ok(tracker, "POST", "runs/search", {"experiment_ids": [exp]})["runs"]
    assert found[0]["inputs"]["dataset_inputs"][0]["dataset"]["digest"] == "5ad3c2f1"


def download_tree(tracker, base):
    """What the client's MlflowArtifactsRepository.download_artifacts does: list, recurse, GET."""
    out = {}
    for f in list_dir(tracker, base):
        name = f["path"].rsplit("/", 1)[-1]
        if f["is_dir"]:
            out.update({f"{name}/{k}": v for k, v in download_tree(tracker, f"{base}/{name}").items()})
        else:
            status, raw = tracker.request(f"{ARTIFACTS}/{base}/{name}")
            assert status == 200, raw
            out[name] = raw
    return out


def test_mlflow3_register_model_and_load_it_by_alias_and_version(tracker):
    """mlflow.register_model("runs:/<run>/model", "churn"), set the alias `champion`, then
    mlflow.pyfunc.load_model("models:/churn@champion") and "models:/churn/1" on another machine:
    the registry calls of mlflow/store/model_registry/rest_store.py and the download of
    ModelsArtifactRepository."""
    exp = ok(tracker, "POST", "experiments/create", {"name": "mlflow3-registry"})["experiment_id"]
    run = ok(tracker, "POST", "runs/create", {"experiment_id": exp})["run"]["info"]["run_id"]
    files = {"MLmodel": b"flavors: {python_function: {}}\n", "data/model.pth": os.urandom(1 << 20)}
    model = log_model(tracker, exp, run, "model", files)

    # register_model: create the name (again: RESOURCE_ALREADY_EXISTS, which the client ignores),
    # then the version, polled until READY.
    ok(tracker, "POST", "registered-models/create", {"name": "churn"})
    status, raw = tracker.request(API + "registered-models/create", "POST", {"name": "churn"})
    assert status == 400 and json.loads(raw)["error_code"] == "RESOURCE_ALREADY_EXISTS"
    mv = ok(tracker, "POST", "model-versions/create", {
        "name": "churn", "source": "models:/" + model["model_id"], "run_id": run,
        "model_id": model["model_id"]})["model_version"]
    assert mv["version"] == "1" and mv["status"] == "READY"
    assert ok(tracker, "GET", "model-versions/get?name=churn&version=1")["model_version"]["status"] == "READY"
    ok(tracker, "POST", "registered-models/alias", {"name": "churn", "alias": "champion", "version": "1"})

    # load_model("models:/churn@champion") and ("models:/churn/1").
    by_alias = ok(tracker, "GET", "registered-models/alias?name=churn&alias=champion")["model_version"]
    for version in (by_alias["version"], "1"):
        uri = ok(tracker, "GET", f"model-versions/get-download-uri?name=churn&version={version}")
        assert download_tree(tracker, artifact_path(uri["artifact_uri"])) == files

    # A second version becomes champion; the first is archived on promotion.
    run2 = ok(tracker, "POST", "runs/create", {"experiment_id": exp})["run"]["info"]["run_id"]
    model2 = log_model(tracker, exp, run2, "model", {"MLmodel": b"v2\n"})
    ok(tracker, "POST", "model-versions/create",
       {"name": "churn", "source": "models:/" + model2["model_id"], "model_id": model2["model_id"]})
    ok(tracker, "POST", "model-versions/transition-stage",
       {"name": "churn", "version": "1", "stage": "Production", "archive_existing_versions": False})
    ok(tracker, "POST", "model-versions/transition-stage",
       {"name": "churn", "version": "2", "stage": "Production", "archive_existing_versions": True})
    ok(tracker, "POST", "registered-models/alias", {"name": "churn", "alias": "champion", "version": "2"})
    got = ok(tracker, "GET", "registered-models/get?name=churn")["registered_model"]
    assert got["aliases"] == [{"alias": "champion", "version": "2"}]
    assert {v["version"]: v["current_stage"] for v in got["latest_versions"]} == {
        "1": "Archived", "2": "Production"}
    uri = ok(tracker, "GET", "model-versions/get-download-uri?name=churn&version=2")
    assert download_tree(tracker, artifact_path(uri["artifact_uri"])) == {"MLmodel": b"v2\n"}
    found = ok(tracker, "GET", "registered-models/search?" +
               urllib.parse.urlencode({"filter": "name = 'churn'"}))
    assert [m["name"] for m in found["registered_models"]] == ["churn"]


TIMES = {"creation_time", "last_update_time", "start_time", "end_time", "timestamp",
         "creation_timestamp", "last_updated_timestamp", "creation_timestamp_ms",
         "last_updated_timestamp_ms"}


def shape(value, ids):
    """`value` with ids replaced by their names in `ids` and times by "<ms>" (after checking they
    are JSON integers, as MLflow's message_to_json writes int64), for exact comparison."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in TIMES:
                assert isinstance(v, int) and not isinstance(v, bool), (k, v)
                out[k] = "<ms>"
            elif k == "version":  # a version number, never an id (which it may equal)
                out[k] = v
            else:
                out[k] = shape(v, ids)
        return out
    if isinstance(value, list):
        return [shape(v, ids) for v in value]
    if isinstance(value, str):  # whole values, or whole '/'-separated parts of a URI
        by_real = {real: name for name, real in ids.items()}
        return "/".join(by_real.get(part, part) for part in value.split("/"))
    return value


def call(tracker, method, endpoint, body=None):
    status, raw = tracker.request(API + endpoint, method, body if body is not None else b"")
    return status, json.loads(raw) if raw else None


def test_answers_are_mlflows_wire_exactly(tracker):
    """Each answer as MLflow's server writes it (service.proto, model_registry.proto through
    mlflow/utils/proto_json_utils.py message_to_json: int64 as numbers, empty repeated fields and
    unset optional ones omitted, enums by name), bodies recorded by hand from that source."""
    ids = {}
    _, b = call(tracker, "POST", "experiments/create", {"name": "wire-exact"})
    ids["<exp>"] = b["experiment_id"]
    assert b == {"experiment_id": ids["<exp>"]}
    _, b = call(tracker, "GET", "experiments/get?experiment_id=" + ids["<exp>"])
    assert shape(b, ids) == {"experiment": {
        "experiment_id": "<exp>", "name": "wire-exact", "artifact_location": "mlflow-artifacts:/<exp>",
        "lifecycle_stage": "active", "creation_time": "<ms>", "last_update_time": "<ms>"}}
    _, b = call(tracker, "POST", "runs/create",
                {"experiment_id": ids["<exp>"], "run_name": "r1", "start_time": 5, "user_id": "u"})
    ids["<run>"] = b["run"]["info"]["run_id"]
    assert shape(b, ids) == {"run": {
        "info": {"run_id": "<run>", "run_uuid": "<run>", "experiment_id": "<exp>",
                 "run_name": "r1", "user_id": "u", "status": "RUNNING", "start_time": "<ms>",
                 "artifact_uri": "mlflow-artifacts:/<exp>/<run>/artifacts",
                 "lifecycle_stage": "active"},
        "data": {"tags": [{"key": "mlflow.runName", "value": "r1"}]},
        "inputs": {}}}
    assert call(tracker, "GET", "metrics/get-history?metric_key=loss&run_id=" + ids["<run>"]) == (200, {})
    assert call(tracker, "POST", "runs/search", {"experiment_ids": [ids["<exp>"]],
                                                 "filter": "metrics.loss > 1"}) == (200, {})
    assert call(tracker, "POST", "runs/log-batch", {"run_id": ids["<run>"], "metrics": [
        {"key": "loss", "value": 0.5, "timestamp": 7, "step": 3}]}) == (200, {})
    _, b = call(tracker, "GET", "metrics/get-history?metric_key=loss&run_id=" + ids["<run>"])
    assert shape(b, ids) == {"metrics": [{"key": "loss", "value": 0.5, "timestamp": "<ms>", "step": 3}]}

    _, b = call(tracker, "POST", "logged-models", {"experiment_id": ids["<exp>"], "name": "m"})
    ids["<model>"] = b["model"]["info"]["model_id"]
    assert shape(b, ids) == {"model": {
        "info": {"model_id": "<model>", "experiment_id": "<exp>", "name": "m",
                 "creation_timestamp_ms": "<ms>", "last_updated_timestamp_ms": "<ms>",
                 "artifact_uri": "mlflow-artifacts:/<exp>/models/<model>/artifacts",
                 "status": "LOGGED_MODEL_PENDING"},
        "data": {}}}
    assert call(tracker, "POST", "logged-models/search", {"experiment_ids": ["424242"]}) == (200, {})

    _, b = call(tracker, "POST", "registered-models/create", {"name": "wire-model"})
    assert shape(b, ids) == {"registered_model": {
        "name": "wire-model", "creation_timestamp": "<ms>", "last_updated_timestamp": "<ms>"}}
    _, b = call(tracker, "POST", "model-versions/create",
                {"name": "wire-model", "source": "models:/" + ids["<model>"], "run_id": ids["<run>"]})
    assert shape(b, ids) == {"model_version": {
        "name": "wire-model", "version": "1", "creation_timestamp": "<ms>",
        "last_updated_timestamp": "<ms>", "current_stage": "None",
        "source": "models:/<model>", "run_id": "<run>", "status": "READY"}}
    assert call(tracker, "GET", "model-versions/search?filter=name%3D%27nothing%27") == (200, {})

    # Errors: {"error_code", "message"} with MLflow's HTTP status for the code.
    assert call(tracker, "GET", "runs/get?run_id=feedface") == (
        404, {"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "Run with id=feedface not found"})
    status, b = call(tracker, "GET", "registered-models/get?name=absent")
    assert (status, b["error_code"]) == (404, "RESOURCE_DOES_NOT_EXIST")
    status, b = call(tracker, "POST", "registered-models/create", {"name": "wire-model"})
    assert (status, b["error_code"]) == (400, "RESOURCE_ALREADY_EXISTS")
    status, b = call(tracker, "POST", "traces/start", {})
    assert (status, b["error_code"]) == (404, "ENDPOINT_NOT_FOUND")
    status, raw = tracker.request(API + "runs/create", "POST", b"{not json")
    assert (status, json.loads(raw)["error_code"]) == (400, "BAD_REQUEST")
    status, b = call(tracker, "POST", "runs/log-batch", {"run_id": ids["<run>"], "metrics": [{"key": "x"}]})
    assert (status, b["error_code"]) == (400, "INVALID_PARAMETER_VALUE")


def same(got, want):
    """got == want, or an error that shows both whole."""
    assert got == want, "\n got: " + json.dumps(got, sort_keys=True) + "\nwant: " + json.dumps(
        want, sort_keys=True)


def test_every_other_endpoint_answers_as_mlflow_does(tracker):
    """The endpoints the test above leaves out, each answer compared whole with the body MLflow's
    server writes for it (recorded by hand from service.proto and model_registry.proto)."""
    ids = {}
    _, b = call(tracker, "POST", "experiments/create",
                {"name": "wire-all", "tags": [{"key": "team", "value": "nlp"}]})
    ids["<exp>"] = b["experiment_id"]
    experiment = {"experiment_id": "<exp>", "name": "wire-all",
                  "artifact_location": "mlflow-artifacts:/<exp>", "lifecycle_stage": "active",
                  "creation_time": "<ms>", "last_update_time": "<ms>",
                  "tags": [{"key": "team", "value": "nlp"}]}
    _, b = call(tracker, "GET", "experiments/get-by-name?experiment_name=wire-all")
    same(shape(b, ids), {"experiment": experiment})
    _, b = call(tracker, "POST", "experiments/search",
                {"filter": "name = 'wire-all'", "max_results": 10})
    same(shape(b, ids), {"experiments": [experiment]})
    assert call(tracker, "POST", "experiments/set-experiment-tag",
                {"experiment_id": ids["<exp>"], "key": "k", "value": "v"}) == (200, {})

    _, b = call(tracker, "POST", "runs/create", {"experiment_id": ids["<exp>"], "run_name": "r",
                                                 "start_time": 1000})
    ids["<run>"] = run_id = b["run"]["info"]["run_id"]
    for endpoint, body in [
            ("runs/log-parameter", {"run_id": run_id, "key": "lr", "value": "0.1"}),
            ("runs/log-metric", {"run_id": run_id, "key": "loss", "value": 2.5,
                                 "timestamp": 1001, "step": 0}),
            ("runs/log-batch", {"run_id": run_id, "metrics": [
                {"key": "loss", "value": 1.5, "timestamp": 1002, "step": 1}]}),
            ("runs/set-tag", {"run_id": run_id, "key": "stage", "value": "dev"}),
            ("runs/set-tag", {"run_id": run_id, "key": "gone", "value": "x"}),
            ("runs/delete-tag", {"run_id": run_id, "key": "gone"})]:
        assert call(tracker, "POST", endpoint, body) == (200, {}), endpoint
    _, b = call(tracker, "POST", "runs/update",
                {"run_id": run_id, "status": "FINISHED", "end_time": 2000})
    # user_id is always written (RunInfo.to_proto sets it, "" included).
    info = {"run_id": "<run>", "run_uuid": "<run>", "experiment_id": "<exp>", "run_name": "r",
            "user_id": "", "status": "FINISHED", "start_time": "<ms>", "end_time": "<ms>",
            "artifact_uri": "mlflow-artifacts:/<exp>/<run>/artifacts", "lifecycle_stage": "active"}
    same(shape(b, ids), {"run_info": info})
    run = {"info": info,
           "data": {"metrics": [{"key": "loss", "value": 1.5, "timestamp": "<ms>", "step": 1}],
                    "params": [{"key": "lr", "value": "0.1"}],
                    "tags": [{"key": "mlflow.runName", "value": "r"},
                             {"key": "stage", "value": "dev"}]},
           "inputs": {}}
    _, b = call(tracker, "GET", "runs/get?run_id=" + run_id)
    same(shape(b, ids), {"run": run})
    _, b = call(tracker, "POST", "runs/search", {"experiment_ids": [ids["<exp>"]]})
    same(shape(b, ids), {"runs": [run]})
    _, b = call(tracker, "GET", "metrics/get-history-bulk-interval?metric_key=loss&max_results=10"
                "&run_ids=" + run_id)
    same(shape(b, ids), {"metrics": [
        {"key": "loss", "value": 2.5, "timestamp": "<ms>", "step": 0, "run_id": "<run>"},
        {"key": "loss", "value": 1.5, "timestamp": "<ms>", "step": 1, "run_id": "<run>"}]})

    # Logged models: get, finalize, tags, params, search.
    _, b = call(tracker, "POST", "logged-models", {
        "experiment_id": ids["<exp>"], "name": "net", "model_type": "pytorch",
        "source_run_id": run_id, "params": [{"key": "depth", "value": "4"}],
        "tags": [{"key": "t", "value": "1"}]})
    ids["<model>"] = model_id = b["model"]["info"]["model_id"]
    for method, endpoint, body in [
            ("PATCH", f"logged-models/{model_id}/tags", {"tags": [{"key": "u", "value": "2"}]}),
            ("DELETE", f"logged-models/{model_id}/tags/t", None),
            ("POST", f"logged-models/{model_id}/params",
             {"params": [{"key": "width", "value": "8"}]})]:
        assert call(tracker, method, endpoint, body) == (200, {}), endpoint
    _, b = call(tracker, "PATCH", "logged-models/" + model_id,
                {"model_id": model_id, "status": "LOGGED_MODEL_READY"})
    model = {"info": {"model_id": "<model>", "experiment_id": "<exp>", "name": "net",
                      "creation_timestamp_ms": "<ms>", "last_updated_timestamp_ms": "<ms>",
                      "artifact_uri": "mlflow-artifacts:/<exp>/models/<model>/artifacts",
                      "status": "LOGGED_MODEL_READY", "model_type": "pytorch",
                      "source_run_id": "<run>", "tags": [{"key": "u", "value": "2"}]},
             "data": {"params": [{"key": "depth", "value": "4"}, {"key": "width", "value": "8"}]}}
    same(shape(b, ids), {"model": model})
    _, b = call(tracker, "GET", "logged-models/" + model_id)
    same(shape(b, ids), {"model": model})
    _, b = call(tracker, "POST", "logged-models/search", {"experiment_ids": [ids["<exp>"]]})
    same(shape(b, ids), {"models": [model]})

    # Datasets and outputs on the run.
    dataset = {"name": "train", "digest": "abc123", "source_type": "local",
               "source": "{\"uri\": \"/data/train.parquet\"}"}
    assert call(tracker, "POST", "runs/log-inputs", {"run_id": run_id, "datasets": [
        {"tags": [{"key": "mlflow.data.context", "value": "training"}], "dataset": dataset}]}) \
        == (200, {})
    assert call(tracker, "POST", "runs/outputs",
                {"run_id": run_id, "models": [{"model_id": model_id, "step": 7}]}) == (200, {})
    _, b = call(tracker, "GET", "runs/get?run_id=" + run_id)
    assert shape(b["run"]["inputs"], ids) == {"dataset_inputs": [
        {"tags": [{"key": "mlflow.data.context", "value": "training"}], "dataset": dataset}]}
    assert shape(b["run"]["outputs"], ids) == {"model_outputs": [{"model_id": "<model>", "step": 7}]}

    # The registry.
    _, b = call(tracker, "POST", "registered-models/create",
                {"name": "wire-all-model", "description": "d",
                 "tags": [{"key": "owner", "value": "me"}]})
    same(shape(b, ids), {"registered_model": {
        "name": "wire-all-model", "creation_timestamp": "<ms>", "last_updated_timestamp": "<ms>",
        "description": "d", "tags": [{"key": "owner", "value": "me"}]}})
    _, b = call(tracker, "POST", "model-versions/create",
                {"name": "wire-all-model", "source": f"runs:/{run_id}/model", "run_id": run_id})
    version = {"name": "wire-all-model", "version": "1", "creation_timestamp": "<ms>",
               "last_updated_timestamp": "<ms>", "current_stage": "None",
               "source": f"runs:/<run>/model", "run_id": "<run>", "status": "READY"}
    same(shape(b, ids), {"model_version": version})
    assert call(tracker, "POST", "registered-models/alias",
                {"name": "wire-all-model", "alias": "champion", "version": "1"}) == (200, {})
    assert call(tracker, "POST", "model-versions/set-tag", {
        "name": "wire-all-model", "version": "1", "key": "q", "value": "ok"}) == (200, {})
    _, b = call(tracker, "POST", "model-versions/transition-stage", {
        "name": "wire-all-model", "version": "1", "stage": "Staging",
        "archive_existing_versions": False})
    version.update(current_stage="Staging", tags=[{"key": "q", "value": "ok"}],
                   aliases=["champion"])
    same(shape(b, ids), {"model_version": version})
    _, b = call(tracker, "GET", "registered-models/alias?name=wire-all-model&alias=champion")
    same(shape(b, ids), {"model_version": version})
    _, b = call(tracker, "GET", "model-versions/get?name=wire-all-model&version=1")
    same(shape(b, ids), {"model_version": version})
    _, b = call(tracker, "POST", "registered-models/get-latest-versions",
                {"name": "wire-all-model", "stages": ["Staging"]})
    same(shape(b, ids), {"model_versions": [version]})
    _, b = call(tracker, "GET", "model-versions/get-download-uri?name=wire-all-model&version=1")
    same(shape(b, ids), {"artifact_uri": "mlflow-artifacts:/<exp>/<run>/artifacts/model"})
    _, b = call(tracker, "GET", "registered-models/get?name=wire-all-model")
    registered = {"name": "wire-all-model", "creation_timestamp": "<ms>",
                  "last_updated_timestamp": "<ms>", "description": "d",
                  "latest_versions": [version], "tags": [{"key": "owner", "value": "me"}],
                  "aliases": [{"alias": "champion", "version": "1"}]}
    same(shape(b, ids), {"registered_model": registered})
    _, b = call(tracker, "GET", "registered-models/search?filter=name%3D%27wire-all-model%27")
    same(shape(b, ids), {"registered_models": [registered]})
    _, b = call(tracker, "GET", "model-versions/search?filter=name%3D%27wire-all-model%27")
    same(shape(b, ids), {"model_versions": [version]})
    _, b = call(tracker, "PATCH", "model-versions/update",
                {"name": "wire-all-model", "version": "1", "description": "v1"})
    same(shape(b, ids), {"model_version": dict(version, description="v1")})
    _, b = call(tracker, "PATCH", "registered-models/update",
                {"name": "wire-all-model", "description": "d2"})
    assert shape(b, ids)["registered_model"]["description"] == "d2"
    _, b = call(tracker, "POST", "registered-models/rename",
                {"name": "wire-all-model", "new_name": "wire-all-renamed"})
    assert shape(b, ids)["registered_model"]["name"] == "wire-all-renamed"
    for method, endpoint, body in [
            ("DELETE", "registered-models/alias", {"name": "wire-all-renamed", "alias": "champion"}),
            ("DELETE", "model-versions/delete-tag",
             {"name": "wire-all-renamed", "version": "1", "key": "q"}),
            ("DELETE", "registered-models/delete-tag", {"name": "wire-all-renamed", "key": "owner"}),
            ("POST", "registered-models/set-tag",
             {"name": "wire-all-renamed", "key": "k", "value": "v"}),
            ("DELETE", "model-versions/delete", {"name": "wire-all-renamed", "version": "1"}),
            ("DELETE", "registered-models/delete", {"name": "wire-all-renamed"}),
            ("DELETE", "logged-models/" + model_id, None),
            ("POST", "runs/delete", {"run_id": run_id}),
            ("POST", "runs/restore", {"run_id": run_id}),
            ("POST", "experiments/update", {"experiment_id": ids["<exp>"], "new_name": "wire-x"}),
            ("POST", "experiments/delete", {"experiment_id": ids["<exp>"]}),
            ("POST", "experiments/restore", {"experiment_id": ids["<exp>"]})]:
        assert call(tracker, method, endpoint, body) == (200, {}), endpoint
