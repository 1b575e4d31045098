// Validates Kubernetes objects against the Kubernetes OpenAPI schema (npm kubernetes-models,
// generated from it; no cluster needed). Reads a JSON array of objects on stdin (the test turns
// YAML documents into JSON), prints one JSON line: [{kind, name, ok, error}].
//   python3 -c '...yaml to json...' | node k8s_validate.mjs
import { readFileSync } from "node:fs";

const MODELS = {
  "batch/v1:Job": () => import("kubernetes-models/batch/v1/Job"),
  "v1:Secret": () => import("kubernetes-models/v1/Secret"),
  "v1:ServiceAccount": () => import("kubernetes-models/v1/ServiceAccount"),
  "v1:ConfigMap": () => import("kubernetes-models/v1/ConfigMap"),
};

const docs = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const doc of docs) {
  const key = `${doc.apiVersion}:${doc.kind}`;
  const entry = { kind: doc.kind, name: doc.metadata?.name, ok: false };
  try {
    if (!MODELS[key]) throw new Error(`no schema for ${key} in this validator`);
    const mod = await MODELS[key]();
    const Model = mod[doc.kind] || mod.default;
    new Model(doc).validate();
    entry.ok = true;
  } catch (e) {
    entry.error = String(e.message || e);
  }
  out.push(entry);
}
console.log(JSON.stringify(out));
