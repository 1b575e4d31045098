// The run page's artifact sections: logged images (per key, with a step slider), the output
// log `ferry run --track` stores (tailed), its checkpoint manifest, and a browsable tree of
// every artifact with sizes and download links.
import {artifactUrl, fetchText, listArtifacts} from '../api.js';
import {fmtBytes, fmtTime, h, message, setChildren} from '../dom.js';

const LOG_TAIL_BYTES = 256 * 1024;

async function listOrEmpty(dir) {
  try { return await listArtifacts(dir); } catch { return []; }
}

// images/<key...>/step-00000042.png: one viewer per key.
export async function imagesSection(root) {
  const keys = [];
  async function walk(dir, key, depth) {
    const entries = await listOrEmpty(dir);
    const files = entries.filter((e) => !e.is_dir && /^step-\d+\.\w+$/.test(e.name));
    if (files.length) keys.push({key, files});
    if (depth < 4) {
      for (const d of entries.filter((e) => e.is_dir)) {
        await walk(d.path, key ? `${key}/${d.name}` : d.name, depth + 1);
      }
    }
  }
  await walk(`${root}/images`, '', 0);
  if (!keys.length) return null;
  return h('section', {id: 'images', 'aria-labelledby': 'images-h'},
           h('h2', {id: 'images-h'}, 'Images'), keys.map((k, i) => imageViewer(k, i)));
}

function imageViewer({key, files}, n) {
  files = files.map((f) => ({...f, step: Number(f.name.match(/\d+/)[0])}))
               .sort((a, b) => a.step - b.step);
  const img = h('img', {class: 'logged-image', loading: 'lazy'});
  const label = h('output', {for: `img-step-${n}`});
  const slider = h('input', {type: 'range', id: `img-step-${n}`, min: 0,
                             max: files.length - 1, value: files.length - 1,
                             oninput: () => show(Number(slider.value))});
  function show(i) {
    const f = files[i];
    img.src = artifactUrl(f.path);
    img.alt = `${key} at step ${f.step}`;
    label.textContent = `step ${f.step} (${i + 1} of ${files.length})`;
  }
  show(files.length - 1);
  return h('figure', {class: 'image-key', 'data-key': key},
           h('figcaption', {}, key),
           h('div', {class: 'slider'}, h('label', {for: `img-step-${n}`}, 'Step'), slider, label),
           img);
}

// The attempt an output log belongs to: output.log is attempt 0, output-attempt<N>.log N.
function logAttempt(name) {
  const m = name.match(/^output(?:-attempt(\d+))?\.log$/);
  return m ? Number(m[1] || 0) : null;
}

// ferry/output.log (and output-attempt<N>.log): the last 256 KiB, reloaded while running; the
// newest attempt's log first.
export async function logSection(root, running) {
  const logs = (await listOrEmpty(`${root}/ferry`))
      .filter((f) => !f.is_dir && logAttempt(f.name) !== null)
      .sort((a, b) => logAttempt(b.name) - logAttempt(a.name));
  if (!logs.length) return null;
  const pre = h('pre', {class: 'log', tabindex: 0, 'aria-label': 'Output log'});
  const note = h('p', {class: 'help'});
  const select = h('select', {id: 'log-file', onchange: () => load()},
                   logs.map((f) => h('option', {value: f.path}, f.name)));
  async function load() {
    const entry = (await listOrEmpty(`${root}/ferry`)).find((f) => f.path === select.value);
    const r = await fetchText(select.value, LOG_TAIL_BYTES, entry?.file_size);
    if (!r) return;
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.textContent = r.text;
    note.textContent = (r.truncated ? `Last ${fmtBytes(LOG_TAIL_BYTES)} of ` : '') +
                       `${fmtBytes(entry?.file_size)}` +
                       (running ? ', refreshed while the run is running' : '');
    if (atEnd || !pre.dataset.seen) pre.scrollTop = pre.scrollHeight;
    pre.dataset.seen = '1';
  }
  await load();
  const section = h('section', {id: 'output-log', 'aria-labelledby': 'log-h'},
                    h('h2', {id: 'log-h'}, 'Output log'),
                    h('div', {class: 'toolbar'}, h('label', {for: 'log-file'}, 'File'), select,
                      h('a', {href: artifactUrl(select.value), download: ''}, 'Download')),
                    note, pre);
  section.refresh = load;
  return section;
}

// A resumed run's attempts (`ferry run --track` continues one tracking run across attempts; tag
// ferry.attempt is the latest): one row per attempt seen, with its own output log. Null for a
// run of one attempt.
export async function attemptsSection(root, current) {
  const logs = new Map((await listOrEmpty(`${root}/ferry`))
      .filter((f) => !f.is_dir && logAttempt(f.name) !== null)
      .map((f) => [logAttempt(f.name), f]));
  const cur = /^\d+$/.test(current || '') ? Number(current) : null;
  const numbers = new Set(logs.keys());
  if (cur !== null) numbers.add(cur);
  if (numbers.size < 2 && !(cur > 0)) return null;
  const rows = [...numbers].sort((a, b) => a - b).map((n) => {
    const f = logs.get(n);
    return h('tr', {'data-attempt': n}, h('td', {class: 'num'}, n),
      h('td', {}, n === cur ? 'latest' : n < cur ? 'interrupted, resumed by a later attempt' : ''),
      h('td', {}, f ? [h('a', {href: artifactUrl(f.path), download: f.name}, f.name), ' ',
                       h('span', {class: 'size'}, fmtBytes(f.file_size))] : 'no log'));
  });
  return h('section', {id: 'attempts', 'aria-labelledby': 'attempts-h'},
    h('h2', {id: 'attempts-h'}, `Attempts (${numbers.size})`),
    h('p', {class: 'help'}, 'This run was resumed: each attempt of the job continued it.'),
    h('table', {class: 'grid attempts'},
      h('thead', {}, h('tr', {}, ['Attempt', 'State', 'Output log'].map(
          (t) => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, rows)));
}

// ferry/checkpoints.json: every output's newest complete checkpoint set (files by reference),
// and checkpoints/<name>/ artifacts.
export async function checkpointsSection(root) {
  const parts = [];
  const listed = (await listOrEmpty(`${root}/ferry`)).some((f) => f.name === 'checkpoints.json');
  const manifest = listed ? await fetchText(`${root}/ferry/checkpoints.json`).catch(() => null)
                          : null;
  if (manifest) {
    let m = null;
    try { m = JSON.parse(manifest.text); } catch { /* shown raw below */ }
    if (m && Array.isArray(m.outputs)) {
      for (const o of m.outputs) {
        parts.push(h('h3', {}, o.destination),
          h('p', {class: 'help'}, `attempt ${o.attempt ?? ''}, state ${o.state ?? ''}` +
            (o.final ? ', final' : '') +
            (o.synced_at ? `, synced ${fmtTime(Date.parse(o.synced_at)) || o.synced_at}` : '')),
          h('table', {class: 'grid checkpoints'},
            h('thead', {}, h('tr', {}, ['File', 'Size', 'CRC32C', 'Status', 'URL'].map(
                (t) => h('th', {scope: 'col'}, t)))),
            h('tbody', {}, (o.files || []).map((f) => h('tr', {},
              h('td', {}, f.path), h('td', {class: 'num'}, fmtBytes(f.size)),
              h('td', {}, h('code', {}, f.crc32c || '')), h('td', {}, f.status || ''),
              h('td', {}, fileLink(f)))))));
      }
    } else {
      parts.push(h('pre', {class: 'log'}, manifest.text));
    }
  }
  const dirs = (await listOrEmpty(`${root}/checkpoints`)).filter((e) => e.is_dir);
  if (dirs.length) {
    parts.push(h('h3', {}, 'Checkpoint artifacts'),
               h('ul', {}, dirs.map((d) => h('li', {}, treeNode(d)))));
  }
  if (!parts.length) return null;
  return h('section', {id: 'checkpoints', 'aria-labelledby': 'ckpt-h'},
           h('h2', {id: 'ckpt-h'}, 'Checkpoints'), parts);
}

// A manifest file's URL: a download link where the browser can fetch the bytes (http(s)://
// destinations); other destinations (s3://, file://) need credentials or the host the run wrote
// to, so the URL is shown with the command that fetches it.
function fileLink(f) {
  const url = f.url || '';
  if (/^https?:\/\//i.test(url)) {
    const name = (f.path || '').split('/').pop() || 'checkpoint';
    const plain = url.split(/[?#]/)[0];  // a presigned query is not shown
    return h('a', {href: url, download: name, rel: 'noreferrer', 'data-path': f.path}, plain);
  }
  if (!url) return '';
  return h('span', {}, h('code', {}, url), ' ',
           h('span', {class: 'help'}, h('code', {}, `ferry cp '${url}' .`)));
}

// A lazily listed directory (<details>) or a file with its size and a download link.
function treeNode(entry) {
  if (!entry.is_dir) {
    return h('span', {class: 'file'},
             h('a', {href: artifactUrl(entry.path), download: entry.name, 'data-path': entry.path},
               entry.name), ' ', h('span', {class: 'size'}, fmtBytes(entry.file_size)));
  }
  const list = h('ul', {});
  const d = h('details', {class: 'dir', ontoggle: async () => {
    if (!d.open || d.dataset.loaded) return;
    d.dataset.loaded = '1';
    const entries = await listOrEmpty(entry.path);
    setChildren(list, entries.length ? entries.map((e) => h('li', {}, treeNode(e)))
                                     : h('li', {}, '(empty)'));
  }}, h('summary', {}, `${entry.name}/`), list);
  return d;
}

export async function artifactsSection(root) {
  const entries = await listOrEmpty(root);
  return h('section', {id: 'artifacts', 'aria-labelledby': 'art-h'},
           h('h2', {id: 'art-h'}, 'Artifacts'),
           entries.length ? h('ul', {class: 'tree'}, entries.map((e) => h('li', {}, treeNode(e))))
                          : message('No artifacts.'));
}
