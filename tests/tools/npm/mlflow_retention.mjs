// The real npm MLflow client (mlflow 2.0.7) setting a checkpoint retention policy, driven by
// tests/cli/test_tracker_retention.py: logs eval_loss points to a run, then sets each
// ferry.retention.* experiment tag with setExperimentTag (no Ferry-specific code).
//   node mlflow_retention.mjs ENDPOINT EXPERIMENT_ID RUN_ID STEP:VALUE,... KEY=VALUE...
import MLflow from "mlflow";

const [endpoint, experiment_id, run_id, points, ...settings] = process.argv.slice(2);
try {
  const mlflow = new MLflow({ endpoint });
  const metrics = points.split(",").map((p) => {
    const [step, value] = p.split(":");
    return { key: "eval_loss", value: Number(value), timestamp: 1000 + Number(step), step: Number(step) };
  });
  await mlflow.Runs.logBatch({ run_id, metrics });
  for (const s of settings) {
    const [key, value] = s.split("=");
    await mlflow.Experiments.setExperimentTag({ experiment_id, key: "ferry.retention." + key, value });
  }
} catch (e) {
  console.error(`mlflow_retention: ${e.message}`);
  process.exit(1);
}
