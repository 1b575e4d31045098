// The real npm MLflow client (mlflow 2.0.7), driven by tests/cli/test_mlflow_api.py: runs one
// scenario against ENDPOINT and prints one line "RESULT <json>" with what the server answered
// (the client itself logs every POST body to stdout, so the marker separates our line).
//   node mlflow_client.mjs scenario ENDPOINT EXPERIMENT_NAME
import MLflow from "mlflow";
import { MLflowBase } from "mlflow/lib/mlflow.js";

// The client throws Error("Error: {status, statusText, data}") for non-200 answers.
async function failure(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    const text = String(e.message).replace(/^Error: /, "");
    try {
      return JSON.parse(text);
    } catch {
      return { raw: text };
    }
  }
}

async function scenario(endpoint, name) {
  const mlflow = new MLflow({ endpoint });
  const base = new MLflowBase({ endpoint });
  const out = {};
  const { experiment_id } = await mlflow.Experiments.create({ name });
  out.experiment_id = experiment_id;
  await mlflow.Experiments.setExperimentTag({ experiment_id, key: "team", value: "ml" });
  out.experiment = (await mlflow.Experiments.get({ experiment_id })).experiment;
  out.unknown_experiment = await failure(
    base.req("get", "experiments/get-by-name", { experiment_name: name + "-missing" }));
  const start = 1700000000000;
  const { run } = await mlflow.Runs.create({
    experiment_id, user_id: "alice", start_time: start,
    tags: [{ key: "mlflow.runName", value: "npm-run" }],
  });
  const run_id = run.info.run_id;
  out.created = run;
  const metrics = [];
  for (let i = 0; i < 1000; i++) {
    metrics.push({ key: "loss", value: 1 / (i + 1), timestamp: start + i, step: i });
  }
  // MLflow's limit is 1000 metrics, params and tags in total per batch.
  await mlflow.Runs.logBatch({ run_id, metrics });
  await mlflow.Runs.logBatch({
    run_id, params: [{ key: "lr", value: "0.1" }], tags: [{ key: "phase", value: "a" }],
  });
  out.history = (await mlflow.Metrics.getHistory({ run_id, metric_key: "loss" })).metrics;
  out.search = await mlflow.Runs.search({
    experiment_ids: [experiment_id], filter: "metrics.loss < 1", run_view_type: "ACTIVE_ONLY",
    max_results: 10, order_by: ["metrics.loss DESC"],
  });
  out.search_none = await mlflow.Runs.search({
    experiment_ids: [experiment_id], filter: "metrics.loss > 1",
  });
  await mlflow.Runs.setTag({ run_id, key: "note", value: "hello" });
  out.tags_after_set = (await mlflow.Runs.get({ run_id })).run.data.tags;
  await mlflow.Runs.deleteTag({ run_id, key: "note" });
  out.tags_after_delete = (await mlflow.Runs.get({ run_id })).run.data.tags;
  await mlflow.Runs.logParameter({ run_id, key: "lr", value: "0.1" });
  out.param_change = await failure(mlflow.Runs.logParameter({ run_id, key: "lr", value: "0.2" }));
  await mlflow.Runs.logMetric({ run_id, key: "acc", value: 0.9, timestamp: start + 5000, step: 3 });
  out.updated = (await mlflow.Runs.update({ run_id, status: "FINISHED", end_time: start + 9000 }))
    .run_info;
  out.final = (await mlflow.Runs.get({ run_id })).run;
  out.listed = (await mlflow.Experiments.list({ view_type: "ALL" })).experiments.map((e) => e.name);
  return out;
}

const [mode, endpoint, ...rest] = process.argv.slice(2);
try {
  if (mode !== "scenario") throw new Error(`unknown mode ${mode}`);
  const out = await scenario(endpoint, rest[0]);
  console.log("RESULT " + JSON.stringify(out));
} catch (e) {
  console.error(`mlflow_client: ${e.message}`);
  process.exit(1);
}
