// #/runs/{run_id} : one run: where it came from (status, duration, host, git commit, exit
// code, ...), params, summary (latest values) and tags, its metric charts grouped into Metrics / System / GPU /
// Data, logged images, the output log, the checkpoint manifest and the artifact tree. While
// the run is RUNNING, the page refreshes its status, charts and log every few seconds.
import {artifactRoot, getRun} from '../api.js';
import {MetricChart} from '../chart.js';
import {colorFor, fmtDuration, fmtNum, fmtTime, h, message, runDuration,
        setChildren} from '../dom.js';
import {pinButton, ranked} from '../pins.js';
import {sectionOf} from '../series.js';
import {chartOptionsBar, defaultOptions} from './options.js';
import {artifactsSection, attemptsSection, checkpointsSection, imagesSection,
        logSection} from './artifacts.js';
import {editSection, NOTE_TAG} from './run_edit.js';

export const LIVE_INTERVAL_MS = 5000;
const SECTIONS = ['Metrics', 'System', 'GPU', 'Data'];

function kvTable(id, caption, rows) {
  if (!rows.length) return null;
  return h('table', {class: 'grid kv', id},
           h('caption', {}, caption),
           h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Key'), h('th', {scope: 'col'}, 'Value'))),
           h('tbody', {}, rows.map(([k, v]) => h('tr', {}, h('th', {scope: 'row'}, k),
                                                 h('td', {}, v)))));
}

function overview(run) {
  const info = run.info;
  const tags = Object.fromEntries((run.data.tags || []).map((t) => [t.key, t.value]));
  const rows = [
    ['Status', h('span', {class: `status status-${info.status}`}, info.status)],
    ['Run ID', h('code', {}, info.run_id)],
    ['Started', fmtTime(info.start_time)],
    ['Ended', fmtTime(info.end_time)],
    ['Duration', fmtDuration(runDuration(info))],
    ['User', info.user_id || tags['mlflow.user']],
    ['Host', tags['ferry.host']],
    ['Git commit', tags['mlflow.source.git.commit'] && h('code', {}, tags['mlflow.source.git.commit'])],
    ['Source', tags['mlflow.source.name']],
    ['Command', tags['ferry.command'] && h('code', {}, tags['ferry.command'])],
    ['Exit code', tags['ferry.exit_code']],
    ['Attempt', tags['ferry.attempt']],
    ['Checkpoints', tags['ferry.checkpoints'] && h('code', {}, tags['ferry.checkpoints'])],
    ['Artifacts', h('code', {}, info.artifact_uri || '')],
  ].filter(([, v]) => v !== undefined && v !== null && v !== '');
  return h('dl', {class: 'overview', id: 'overview'},
           rows.map(([k, v]) => [h('dt', {}, k), h('dd', {'data-field': k}, v)]));
}

export async function runView(main, params, query, page) {
  const runId = params.id;
  let run = await getRun(runId);
  const info = run.info;
  const options = defaultOptions();
  const charts = [];
  const runs = [{id: runId, name: info.run_name || runId, color: colorFor(0),
                 start: info.start_time}];
  const head = h('header', {class: 'run-head'});
  const overviewBox = h('div', {});
  function renderHead() {
    setChildren(head,
      h('p', {class: 'crumbs'}, h('a', {href: '#/'}, 'Experiments'), ' / ',
        h('a', {href: `#/experiments/${encodeURIComponent(run.info.experiment_id)}`}, 'Runs')),
      h('h1', {}, run.info.run_name || run.info.run_id));
    setChildren(overviewBox, overview(run));
  }
  renderHead();
  const tags = run.data.tags || [];
  const paramRows = (run.data.params || []).map((p) => [p.key, p.value])
                                           .sort((a, b) => a[0].localeCompare(b[0]));
  // One summary: each metric's latest value, or its summary.<key> tag where the run set one
  // (ferry.track's finish() sets one per metric: the same values, shown once).
  const summary = new Map((run.data.metrics || []).map((m) => [m.key, fmtNum(m.value)]));
  for (const t of tags) if (t.key.startsWith('summary.')) summary.set(t.key.slice(8), t.value);
  const summaryRows = [...summary].sort((a, b) => a[0].localeCompare(b[0]));
  const note = tags.find((t) => t.key === NOTE_TAG)?.value;
  const tagRows = tags.filter((t) => !t.key.startsWith('summary.') && t.key !== NOTE_TAG &&
                                     !t.key.startsWith('mlflow.log-model'))
                      .map((t) => [t.key, t.value]).sort((a, b) => a[0].localeCompare(b[0]));

  // Datasets the run read (mlflow.log_input) and the logged models it produced (MLflow 3).
  const datasets = (run.inputs?.dataset_inputs || []).map((d) => {
    const context = (d.tags || []).filter((t) => t.key === 'mlflow.data.context')
                                  .map((t) => t.value).join(', ');
    return [d.dataset.name, h('span', {}, h('code', {}, d.dataset.digest),
                              context ? ` (${context})` : '', ' ', d.dataset.source_type)];
  });
  const outputs = (run.outputs?.model_outputs || []).map((o) => [h('code', {}, o.model_id),
                                                                 `step ${o.step}`]);

  const chartsBox = h('div', {id: 'charts'});
  function renderCharts() {
    charts.forEach((c) => c.destroy());
    charts.length = 0;
    const keys = ranked((run.data.metrics || []).map((m) => m.key));
    const bySection = new Map(SECTIONS.map((s) => [s, []]));
    for (const k of keys) bySection.get(sectionOf(k)).push(k);
    const parts = [];
    for (const [name, ks] of bySection) {
      if (!ks.length) continue;
      const grid = h('div', {class: 'chart-grid'});
      parts.push(h('section', {class: 'chart-section', 'data-section': name,
                               'aria-labelledby': `sec-${name}`},
                   h('h2', {id: `sec-${name}`}, name), grid));
      for (const k of ks) {
        const title = name === 'Metrics' ? k : k.replace(/^system\//, '');
        const c = new MetricChart(k, runs, options, {height: 200, title,
                                                     extra: pinButton(k, reorder)});
        charts.push(c);
        grid.append(c.el);
      }
    }
    setChildren(chartsBox, parts.length ? parts : message('No metrics logged.'));
    // Charts load as they scroll into view: a run with 50 system metrics stays quick.
    const io = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        io.unobserve(e.target);
        charts.find((c) => c.el === e.target)?.load();
      }
    }, {rootMargin: '200px'});
    charts.forEach((c) => io.observe(c.el));
  }

  // A pin moves its chart (and unpinning moves it back) without fetching again.
  function reorder() {
    const order = ranked(charts.map((c) => c.key));
    for (const k of order) {
      const c = charts.find((x) => x.key === k);
      c.el.parentElement.append(c.el);
    }
  }

  const optionsBar = chartOptionsBar(options, (what) => {
    for (const c of charts) if (c.series.length) c.draw();
  });
  const root = artifactRoot(run);
  const editBox = h('div', {});
  setChildren(main, head,
              info.lifecycle_stage === 'deleted'
                ? message('This run is deleted: it is left out of the runs table and can be ' +
                          'restored (Edit run, below).') : null,
              note ? h('section', {id: 'note', 'aria-label': 'Note'},
                       h('p', {class: 'note'}, note)) : null,
              h('div', {class: 'columns2'}, overviewBox,
                kvTable('params', 'Parameters', paramRows),
                kvTable('summary', 'Summary', summaryRows)),
              h('div', {class: 'columns2'},
                kvTable('datasets', 'Datasets', datasets),
                kvTable('model-outputs', 'Logged models', outputs)),
              h('h2', {}, 'Charts'), optionsBar, chartsBox,
              kvTable('tags', 'Tags', tagRows), editBox,
              h('div', {id: 'artifact-sections'}, root === null
                  ? message(`Artifacts are at ${info.artifact_uri}, not on this server.`)
                  : message('Loading artifacts…')));
  renderCharts();
  editSection(run).then((s) => s && setChildren(editBox, s));

  let log = null;
  if (root !== null) {
    const attempt = tags.find((t) => t.key === 'ferry.attempt')?.value;
    const [attempts, images, logS, ckpt, arts] = await Promise.all([
      attemptsSection(root, attempt), imagesSection(root),
      logSection(root, info.status === 'RUNNING'), checkpointsSection(root),
      artifactsSection(root)]);
    log = logS;
    setChildren(main.querySelector('#artifact-sections'), attempts, images, logS, ckpt, arts);
    const row = main.querySelector('#overview dd[data-field="Attempt"]');
    if (attempts && row) {
      row.append(' ', h('a', {href: '#attempts', onclick: (ev) => {
        ev.preventDefault();
        main.querySelector('#attempts').scrollIntoView();
      }}, `(resumed: ${attempts.querySelectorAll('tbody tr').length} attempts)`));
    }
  }

  // Live updates: status, duration and latest values; charts refetch their current range.
  if (info.status === 'RUNNING') {
    const timer = setInterval(async () => {
      try {
        run = await getRun(runId);
      } catch { return; }
      renderHead();
      const known = new Set(charts.map((c) => c.key));
      if ((run.data.metrics || []).some((m) => !known.has(m.key))) renderCharts();
      else charts.filter((c) => c.series.length).forEach((c) => c.load());
      if (log) log.refresh();
      if (run.info.status !== 'RUNNING') clearInterval(timer);
    }, LIVE_INTERVAL_MS);
    page.onLeave(() => clearInterval(timer));
  }
  page.onLeave(() => charts.forEach((c) => c.destroy()));
}
