// #/compare?exp=E&runs=A,B,...&keys=K1,K2 : the selected runs' metrics overlaid, one chart per key
// (min/max bands, smoothing, step/time x axis, log scale, zoom; see chart.js), with a legend
// linking each run. Runs still RUNNING are refreshed every few seconds ("Live").
import {getRuns} from '../api.js';
import {MetricChart} from '../chart.js';
import {colorFor, h, message, setChildren} from '../dom.js';
import {chartOptionsBar, defaultOptions} from './options.js';
import {LIVE_INTERVAL_MS} from './run.js';
import {MAX_COMPARE} from './runs.js';

// Keys charted when the URL names none: the first few that are not system metrics.
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
  const list = await getRuns(ids, exp);
  const runs = list.map((r, i) => ({id: r.info.run_id, name: r.info.run_name || r.info.run_id,
                                    color: colorFor(i), start: r.info.start_time, run: r}));
  const allKeys = [...new Set(list.flatMap((r) => (r.data.metrics || []).map((m) => m.key)))].sort();
  let keys = (query.get('keys') || '').split(',').filter((k) => allKeys.includes(k));
  if (!keys.length) keys = allKeys.filter((k) => !k.startsWith('system/')).slice(0, DEFAULT_KEYS);
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
      const c = new MetricChart(k, runs, options, {height: 300});
      charts.push(c);
      grid.append(c.el);
    }
    if (!keys.length) grid.append(message('Choose metrics to chart.'));
    return Promise.all(charts.map((c) => c.load()));
  }

  const keyBoxes = h('div', {class: 'columns-list'}, allKeys.map((k, i) => h('label', {class: 'check'},
      h('input', {type: 'checkbox', id: `key-${i}`, value: k, checked: keys.includes(k),
                  onchange: (ev) => {
        keys = ev.target.checked ? [...keys, k] : keys.filter((x) => x !== k);
        syncUrl();
        build();
      }}), k)));
  const running = runs.some((r) => r.run.info.status === 'RUNNING');
  const live = h('input', {type: 'checkbox', id: 'opt-live', checked: running});
  const legend = h('ul', {class: 'legend', id: 'legend', 'aria-label': 'Runs'}, runs.map((r) =>
      h('li', {}, h('span', {class: 'swatch', style: {background: r.color}, 'aria-hidden': 'true'}),
        h('a', {href: `#/runs/${r.id}`}, r.name),
        r.run.info.status === 'RUNNING' ? h('span', {class: 'status status-RUNNING'}, 'RUNNING') : '')));
  setChildren(main,
    h('h1', {}, `Compare ${runs.length} runs`),
    chartOptionsBar(options, () => charts.forEach((c) => c.series.length && c.draw())),
    h('div', {class: 'toolbar'},
      h('details', {class: 'columns'}, h('summary', {}, `Metrics (${keys.length} of ${allKeys.length})`),
        keyBoxes),
      h('label', {class: 'check'}, live, 'Live updates')),
    grid, h('h2', {}, 'Runs'), legend);
  if (runs.length < ids.length) {
    main.insertBefore(message(`${ids.length - runs.length} of the selected runs were not found.`),
                      grid);
  }
  syncUrl();
  await build();

  const timer = setInterval(() => {
    if (live.checked) charts.forEach((c) => c.load());
  }, LIVE_INTERVAL_MS);
  page.onLeave(() => { clearInterval(timer); charts.forEach((c) => c.destroy()); });
}
