// The REST calls the UI makes: MLflow's tracking API (docs/semantics/mlflow.md) under the UI
// prefix /ajax-api/2.0/mlflow, and the artifact API (mlflow-artifacts.md). Errors become
// ApiError with the server's message.

const MLFLOW = '/ajax-api/2.0/mlflow';
const ARTIFACTS = '/api/2.0/mlflow-artifacts';
// get-history-bulk-interval takes at most this many run ids per request.
export const MAX_BULK_RUNS = 100;
// ...and at most this many points per run.
export const MAX_BULK_RESULTS = 2500;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function request(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  let body = {};
  try { body = text ? JSON.parse(text) : {}; } catch { body = {message: text}; }
  if (!r.ok) throw new ApiError(r.status, body.message || body.error || `HTTP ${r.status}`);
  return body;
}

function post(path, body) {
  const headers = {'Content-Type': 'application/json'};
  return request(`${MLFLOW}/${path}`, {method: 'POST', headers, body: JSON.stringify(body)});
}

// Edits (docs/semantics/ui.md, "Editing"). On a server with tokens the sign-in cookie only reads,
// so a write carries the write token the user unlocked editing with, in Authorization; it is
// kept in this module's memory only (never in storage or a cookie) and gone on reload.
let writeToken = null;

export function setWriteToken(token) {
  writeToken = token || null;
}

// {auth_required, access: 'write'|'read'|'none', signed_in} for this browser, or for `token`.
export async function whoami(token) {
  const headers = token ? {Authorization: `Bearer ${token}`} : {};
  return request('/api/ferry/whoami', {headers, cache: 'no-store',
                                       credentials: token ? 'omit' : 'same-origin'});
}

function write(path, body) {
  const headers = {'Content-Type': 'application/json'};
  if (writeToken) headers.Authorization = `Bearer ${writeToken}`;
  return request(`${MLFLOW}/${path}`, {method: 'POST', headers, body: JSON.stringify(body),
                                       credentials: writeToken ? 'omit' : 'same-origin'});
}

export const setTag = (runId, key, value) => write('runs/set-tag', {run_id: runId, key, value});
export const deleteTag = (runId, key) => write('runs/delete-tag', {run_id: runId, key});
export const renameRun = (runId, name) => write('runs/update', {run_id: runId, run_name: name});
export const deleteRun = (runId) => write('runs/delete', {run_id: runId});
export const restoreRun = (runId) => write('runs/restore', {run_id: runId});

function get(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) continue;
    for (const x of Array.isArray(v) ? v : [v]) q.append(k, String(x));
  }
  return request(`${MLFLOW}/${path}?${q}`);
}

export function searchExperiments(pageToken) {
  return post('experiments/search', {max_results: 1000, page_token: pageToken || undefined});
}

export async function getExperiment(id) {
  return (await get('experiments/get', {experiment_id: id})).experiment;
}

// {runs, next_page_token}
export async function searchRuns({experimentIds, filter, orderBy, maxResults, pageToken,
                                  viewType}) {
  const body = await post('runs/search', {
    experiment_ids: experimentIds, filter: filter || '', order_by: orderBy || [],
    run_view_type: viewType || undefined,
    max_results: maxResults || 100, page_token: pageToken || undefined});
  return {runs: body.runs || [], next: body.next_page_token || null};
}

export async function getRun(id) {
  return (await get('runs/get', {run_id: id})).run;
}

// Runs by id, in the order given (missing ones left out): one search per 100 ids when the
// experiments are known, else runs/get for each, 8 at a time.
export async function getRuns(ids, experimentIds) {
  const out = [];
  if (experimentIds && experimentIds.length) {
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100).map((x) => `'${x.replace(/'/g, '')}'`);
      const filter = `attributes.run_id IN (${chunk.join(', ')})`;
      out.push(...(await searchRuns({experimentIds, filter, maxResults: 1000})).runs);
    }
  } else {
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const id = ids[next++];
        try { out.push(await getRun(id)); } catch (e) { if (e.status !== 404) throw e; }
      }
    };
    await Promise.all(Array.from({length: 8}, worker));
  }
  const byId = new Map(out.map((r) => [r.info.run_id, r]));
  return ids.map((id) => byId.get(id)).filter(Boolean);
}

// The downsampled history of `key` for `runIds` (at most MAX_BULK_RUNS), with at most
// `maxResults` points per run in [start, end] (both or neither). Points: {run_id, step,
// timestamp, value} with numbers.
export async function bulkInterval(runIds, key, maxResults, start, end) {
  const params = {run_ids: runIds, metric_key: key, max_results: maxResults};
  if (start !== undefined && start !== null) {
    params.start_step = Math.floor(start);
    params.end_step = Math.ceil(end);
  }
  const body = await get('metrics/get-history-bulk-interval', params);
  return (body.metrics || []).map((m) => ({
    run_id: m.run_id, step: Number(m.step), timestamp: Number(m.timestamp),
    value: Number(m.value)}));
}

// An experiment's list of experiments (all pages).
export async function allExperiments() {
  const out = [];
  let token = null;
  do {
    const r = await searchExperiments(token);
    out.push(...(r.experiments || []));
    token = r.next_page_token || null;
  } while (token);
  return out;
}

// The artifact-API path of a run's artifacts ("0/<run id>/artifacts"), or null when the
// run's artifact_uri is not served by this server (e.g. an s3:// location).
export function artifactRoot(run) {
  const uri = run.info.artifact_uri || '';
  const m = uri.match(/^mlflow-artifacts:(?:\/\/[^/]*)?\/*(.*)$/);
  return m ? m[1].replace(/\/+$/, '') : null;
}

export function artifactUrl(path) {
  return `${ARTIFACTS}/artifacts/${path.split('/').map(encodeURIComponent).join('/')}`;
}

// [{path (full), name, is_dir, file_size}] below `dir`.
export async function listArtifacts(dir) {
  const body = await request(`${ARTIFACTS}/artifacts?${new URLSearchParams({path: dir})}`);
  return (body.files || []).map((f) => ({
    name: f.path, path: `${dir}/${f.path}`, is_dir: !!f.is_dir,
    file_size: f.file_size === undefined ? null : Number(f.file_size)}));
}

// The text of an artifact, or its last `tailBytes` bytes when it is longer ({text, size,
// truncated}); null when it does not exist.
export async function fetchText(path, tailBytes, size) {
  const headers = {};
  if (tailBytes && size && size > tailBytes) headers.Range = `bytes=${size - tailBytes}-`;
  const r = await fetch(artifactUrl(path), {headers});
  if (r.status === 404) return null;
  if (!r.ok) throw new ApiError(r.status, `HTTP ${r.status} for ${path}`);
  return {text: await r.text(), truncated: r.status === 206};
}

// The Model Registry (docs/semantics/mlflow.md, "Model Registry").
export async function searchRegisteredModels(pageToken) {
  const body = await get('registered-models/search', {max_results: 1000, page_token: pageToken});
  return {models: body.registered_models || [], next: body.next_page_token || null};
}

export async function getRegisteredModel(name) {
  return (await get('registered-models/get', {name})).registered_model;
}

// Every version of one registered model, newest first.
export async function modelVersions(name) {
  const quoted = name.replace(/'/g, "''");
  const body = await get('model-versions/search', {filter: `name = '${quoted}'`,
                                                   order_by: 'version_number DESC'});
  return body.model_versions || [];
}
