// #/compare?exp=E&runs=A,B,...&keys=K1,K2 : the selected runs' metrics overlaid, one chart per key
// (min/max bands, smoothing, step/time x axis, log scale, zoom; see chart.js), a legend saying
// which colour is which run (each linked), and the runs' parameters side by side with the
// differing ones marked. Runs still RUNNING are refreshed every few seconds ("Live").
import {getRuns} from '../api.js';
import {MetricChart} from '../chart.js';
import {colorFor, h, message, setChildren} from '../dom.js';
import {pinButton, ranked} from '../pins.js';
import {chartOptionsBar, defaultOptions} from './options.js';
import {paramsDiffSection} from './params_diff.js';
import {LIVE_INTERVAL_MS} from './run.js';
import {MAX_COMPARE} from './runs.js';

// Keys charted when the URL names none: the first few that are not system metrics, in the
// order users look at them (pinned, loss, accuracy, val, ...; series.js rankKeys).
const DEFAULT_KEYS = 6;

export async function compareView(main, params, query, page) {
  const ids = (query.get('runs') || '').split(',').filter(Boolean).slice(0, MAX_COMPARE);
  setChildren(main, h('h1', {}, 'Compare runs'), message('Loading runs…'));
  if (!ids.length) {
    setChildren(main, h('h1', {}, 'Compare runs'),
                message('No runs selected: tick runs in a runs table, then "Compare selected".'));
    return;
  }
  const exp = (query.get('exp') || '').split(',').filter(Boolean);
  // Charts named in the URL start fetching points at once, while the runs load.
  const runs = ids.map((id, i) => ({id, name: id, color: colorFor(i), start: 0, run: null}));
  const runsReady = getRuns(ids, exp).then((list) => {
    const byId = new Map(list.map((r) => [r.info.run_id, r]));
    for (const r of runs) {
      const run = byId.get(r.id);
      if (!run) continue;
      Object.assign(r, {name: run.info.run_name || r.id, start: run.info.start_time, run});
    }
    return list;
  });
  let keys = (query.get('keys') || '').split(',').filter(Boolean);
  let allKeys = keys;
  const early = keys.length > 0;
  const list = early ? [] : await runsReady;
  if (!early) {
    allKeys = ranked(new Set(list.flatMap((r) => (r.data.metrics || []).map((m) => m.key))));
    keys = allKeys.filter((k) => !k.startsWith('system/')).slice(0, DEFAULT_KEYS);
  }
  const options = defaultOptions();
  const charts = [];
  const grid = h('div', {class: 'chart-grid wide', id: 'compare-charts'});

  function syncUrl() {
    history.replaceState(null, '', `#/compare?exp=${exp.join(',')}&runs=${ids.join(',')}&keys=` +
                         keys.map(encodeURIComponent).join(','));
  }
  function build() {
    charts.forEach((c) => c.destroy());
    charts.length = 0;
    grid.replaceChildren();
    for (const k of keys) {
      const c = new MetricChart(k, runs, options, {height: 300, ready: runsReady,
                                                   extra: pinButton(k, reorder)});
      charts.push(c);
      grid.append(c.el);
    }
    if (!keys.length) grid.append(message('Choose metrics to chart.'));
    return Promise.all(charts.map((c) => c.load()));
  }

  // A pin moves its chart first (unpinning, back) without fetching again.
  function reorder() {
    keys = ranked(keys);
    allKeys = ranked(allKeys);
    for (const k of keys) grid.append(charts.find((c) => c.key === k).el);
    syncUrl();
    renderKeys();
  }

  const keyBox = h('div', {class: 'columns-list'});
  const keySummary = h('summary', {});
  function renderKeys() {
    keySummary.textContent = `Metrics (${keys.length} of ${allKeys.length})`;
    setChildren(keyBox, allKeys.map((k, i) => h('label', {class: 'check'},
        h('input', {type: 'checkbox', id: `key-${i}`, value: k, checked: keys.includes(k),
                    onchange: (ev) => {
          keys = ev.target.checked ? [...keys, k] : keys.filter((x) => x !== k);
          syncUrl();
          renderKeys();
          build();
        }}), k)));
  }
  renderKeys();
  const live = h('input', {type: 'checkbox', id: 'opt-live'});
  const legend = h('ul', {class: 'legend', id: 'legend', 'aria-label': 'Runs: colour and name'});
  const notes = h('div', {});
  const paramsBox = h('div', {});
  setChildren(main,
    h('h1', {}, `Compare ${ids.length} runs`),
    chartOptionsBar(options, () => charts.forEach((c) => c.series.length && c.draw())),
    h('div', {class: 'toolbar'},
      h('details', {class: 'columns'}, keySummary, keyBox),
      h('label', {class: 'check'}, live, 'Live updates')),
    legend, notes, grid, paramsBox);
  syncUrl();
  const loading = build();
  const found = await runsReady;
  if (early) {
    const logged = found.flatMap((r) => (r.data.metrics || []).map((m) => m.key));
    allKeys = ranked(new Set([...keys, ...logged]));
    renderKeys();
  }
  const shown = runs.filter((r) => r.run);
  setChildren(legend, shown.map((r) => h('li', {},
      h('span', {class: 'swatch', style: {background: r.color}, 'aria-hidden': 'true'}),
      h('a', {href: `#/runs/${r.id}`}, r.name),
      r.run.info.status === 'RUNNING' ? h('span', {class: 'status status-RUNNING'}, 'RUNNING') : '')));
  setChildren(paramsBox, paramsDiffSection(shown));
  live.checked = shown.some((r) => r.run.info.status === 'RUNNING');
  if (shown.length < ids.length) {
    setChildren(notes, message(`${ids.length - shown.length} of the selected runs were not found.`));
  }
  await loading;

  const timer = setInterval(() => {
    if (live.checked) charts.forEach((c) => c.load());
  }, LIVE_INTERVAL_MS);
  page.onLeave(() => { clearInterval(timer); charts.forEach((c) => c.destroy()); });
}
