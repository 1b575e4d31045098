// The real npm Hugging Face client, driven by the tests: downloads a file or a whole repo
// snapshot from HUB_URL into a cache dir and prints one JSON line (paths, sizes, sha256s).
//   node hf_client.mjs file HUB_URL REPO REVISION PATH CACHE_DIR [TOKEN]
//   node hf_client.mjs snapshot HUB_URL REPO REVISION CACHE_DIR [TOKEN]
// REPO: "org/name" (a model) or "datasets/org/name". The client's Xet switch is on, its default;
// HF_CLIENT_XET=0 passes `xet: false` (a user who turned it off).
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { downloadFileToCacheDir, snapshotDownload } from "@huggingface/hub";

function repoOf(spec) {
  if (spec.startsWith("datasets/")) return { type: "dataset", name: spec.slice("datasets/".length) };
  return { type: "model", name: spec };
}

function describe(path) {
  const data = readFileSync(path);
  return { path, size: statSync(path).size, sha256: createHash("sha256").update(data).digest("hex") };
}

const [mode, hubUrl, repo, revision, ...rest] = process.argv.slice(2);
const xet = process.env.HF_CLIENT_XET === "0" ? { xet: false } : {};
try {
  if (mode === "file") {
    const [path, cacheDir, accessToken] = rest;
    const out = await downloadFileToCacheDir({ repo: repoOf(repo), path, revision, hubUrl, cacheDir, accessToken, ...xet });
    console.log(JSON.stringify(describe(out)));
  } else if (mode === "snapshot") {
    const [cacheDir, accessToken] = rest;
    const dir = await snapshotDownload({ repo: repoOf(repo), revision, hubUrl, cacheDir, accessToken, ...xet });
    console.log(JSON.stringify({ dir }));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} catch (e) {
  console.error(`hf_client: ${e.message}`);
  process.exit(1);
}
