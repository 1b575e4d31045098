// #/experiments/{id}?filter=F&order=O : the runs table, a page at a time (runs/search with the
// API's own filter syntax and order_by), sortable by any column, columns chosen from the
// metrics, params and tags of the runs shown (remembered per experiment), runs selectable for
// the compare view.
import {getExperiment, searchRuns} from '../api.js';
import {arrowNavigation, fmtDuration, fmtNum, fmtTime, h, message, runDuration,
        setChildren} from '../dom.js';
import {ranked} from '../pins.js';

const PAGE_SIZES = [25, 50, 100, 250, 500];
export const MAX_COMPARE = 100;

const ATTRS = [
  {id: 'attributes.run_name', label: 'Run', sort: 'attributes.run_name'},
  {id: 'attributes.status', label: 'Status', sort: 'attributes.status'},
  {id: 'attributes.start_time', label: 'Started', sort: 'attributes.start_time'},
  {id: 'duration', label: 'Duration'},
  {id: 'attributes.user_id', label: 'User', sort: 'attributes.user_id'},
];

function quoteKey(k) {
  return /^[A-Za-z0-9_.]+$/.test(k) ? k : '`' + k.replace(/`/g, '') + '`';
}

function cellValue(run, col) {
  const [kind, key] = [col.slice(0, col.indexOf(':')), col.slice(col.indexOf(':') + 1)];
  const d = run.data || {};
  const find = (list) => (list || []).find((x) => x.key === key);
  if (kind === 'metrics') return fmtNum(find(d.metrics)?.value);
  if (kind === 'params') return find(d.params)?.value ?? '';
  return find(d.tags)?.value ?? '';
}

export async function runsView(main, params, query) {
  const expId = params.id;
  const store = `ferry.columns.${expId}`;
  const state = {
    filter: query.get('filter') || '',
    order: query.get('order') || '',
    pageSize: Number(localStorage.getItem('ferry.pageSize')) || 100,
    tokens: [null],  // the page tokens of the pages seen: tokens[i] fetches page i
    page: 0,
    runs: [],
    next: null,
    selected: new Set((query.get('selected') || '').split(',').filter(Boolean)),
    deleted: query.get('deleted') === '1',  // deleted runs instead (to restore one)
    columns: JSON.parse(localStorage.getItem(store) || 'null'),
    known: new Set(),
  };
  const title = h('h1', {}, 'Runs');
  const filterInput = h('input', {id: 'filter', type: 'search', value: state.filter,
      placeholder: "metrics.loss < 0.5 and params.lr = '0.1'", size: 50,
      'aria-describedby': 'filter-help'});
  const sizeSelect = h('select', {id: 'page-size', onchange: () => {
    state.pageSize = Number(sizeSelect.value);
    localStorage.setItem('ferry.pageSize', String(state.pageSize));
    reload();
  }}, PAGE_SIZES.map((n) => h('option', {value: n, selected: n === state.pageSize}, n)));
  const errorBox = h('div', {id: 'runs-error'});
  const columnsBox = h('div', {class: 'columns-list'});
  const compareBtn = h('button', {type: 'button', id: 'compare', onclick: () => {
    location.hash = `#/compare?exp=${encodeURIComponent(expId)}&runs=${[...state.selected].join(',')}`;
  }});
  const pager = h('div', {class: 'pager'});
  const tableBox = h('div', {class: 'table-box'});
  const form = h('form', {class: 'toolbar', role: 'search', onsubmit: (ev) => {
    ev.preventDefault();
    state.filter = filterInput.value.trim();
    syncUrl();
    reload();
  }},
  h('label', {for: 'filter'}, 'Filter'), filterInput,
  h('button', {type: 'submit'}, 'Apply'),
  h('label', {for: 'page-size'}, 'Rows per page'), sizeSelect,
  h('details', {class: 'columns'}, h('summary', {}, 'Columns'), columnsBox),
  h('label', {class: 'check'}, h('input', {type: 'checkbox', id: 'show-deleted',
      checked: state.deleted, onchange: (ev) => {
        state.deleted = ev.target.checked;
        syncUrl();
        reload();
      }}), 'Deleted runs'),
  compareBtn);
  setChildren(main, title, form,
              h('p', {id: 'filter-help', class: 'help'},
                'MLflow search syntax: metrics.KEY, params.KEY, tags.KEY, attributes.status ' +
                "…, combined with and. Example: metrics.loss < 0.5 and params.optim = 'adam'"),
              errorBox, tableBox, pager);
  getExperiment(expId).then((e) => { title.textContent = `Runs of ${e.name}`; },
                            () => {});

  function syncUrl() {
    const q = new URLSearchParams();
    if (state.filter) q.set('filter', state.filter);
    if (state.order) q.set('order', state.order);
    if (state.deleted) q.set('deleted', '1');
    history.replaceState(null, '', `#/experiments/${encodeURIComponent(expId)}` +
                         (q.toString() ? `?${q}` : ''));
  }

  function updateCompare() {
    const n = state.selected.size;
    compareBtn.textContent = `Compare selected (${n})`;
    compareBtn.disabled = n === 0 || n > MAX_COMPARE;
    compareBtn.title = n > MAX_COMPARE ? `At most ${MAX_COMPARE} runs` : '';
  }

  async function reload() {
    state.tokens = [null];
    state.page = 0;
    await fetchPage();
  }

  async function fetchPage() {
    errorBox.replaceChildren();
    const t0 = performance.now();
    let r;
    try {
      r = await searchRuns({experimentIds: [expId], filter: state.filter,
                            orderBy: state.order ? [state.order] : [],
                            maxResults: state.pageSize, pageToken: state.tokens[state.page],
                            viewType: state.deleted ? 'DELETED_ONLY' : undefined});
    } catch (e) {
      errorBox.replaceChildren(message(`Search failed: ${e.message}`, 'error'));
      return;
    }
    state.runs = r.runs;
    state.next = r.next;
    state.tokens[state.page + 1] = r.next;
    state.fetchMs = performance.now() - t0;
    render();
    const reg = (window.__ferry ??= {charts: [], draws: []});
    reg.table = {readyAt: performance.now(), fetchMs: state.fetchMs, rows: state.runs.length,
                 page: state.page};
  }

  function learnKeys() {
    for (const run of state.runs) {
      const d = run.data || {};
      for (const m of d.metrics || []) state.known.add(`metrics:${m.key}`);
      for (const p of d.params || []) state.known.add(`params:${p.key}`);
      for (const t of d.tags || []) {
        if (!t.key.startsWith('mlflow.')) state.known.add(`tags:${t.key}`);
      }
    }
    if (!state.columns) {
      // Metrics users look at first (loss, accuracy, val..., pinned ones before them), then
      // data/*; system metrics only on request.
      const metrics = ranked([...state.known].filter((k) => k.startsWith('metrics:') &&
          !k.startsWith('metrics:system/')).map((k) => k.slice(8))).slice(0, 4);
      const params = [...state.known].filter((k) => k.startsWith('params:')).sort().slice(0, 4);
      state.columns = [...metrics.map((k) => `metrics:${k}`), ...params];
    }
  }

  function renderColumnChooser() {
    const keys = [...new Set([...state.known, ...state.columns])].sort();
    setChildren(columnsBox, keys.length ? keys.map((k, i) => h('label', {class: 'check'},
        h('input', {type: 'checkbox', id: `col-${i}`, value: k,
                    checked: state.columns.includes(k), onchange: (ev) => {
          state.columns = ev.target.checked ? [...state.columns, k]
                                            : state.columns.filter((c) => c !== k);
          localStorage.setItem(store, JSON.stringify(state.columns));
          renderTable();
        }}), k.replace(':', '.'))) : message('No metrics, params or tags on this page.'));
  }

  function sortButton(label, sortKey) {
    const [key, dir] = state.order.split(/ (?=ASC$|DESC$)/);
    const active = sortKey && key === sortKey;
    const th = h('th', {scope: 'col', 'aria-sort': active ? (dir === 'DESC' ? 'descending'
                                                                             : 'ascending')
                                                          : null});
    if (!sortKey) return setChildren(th, label);
    return setChildren(th, h('button', {type: 'button', class: 'sort', onclick: () => {
      state.order = active && dir !== 'DESC' ? `${sortKey} DESC` : `${sortKey} ASC`;
      syncUrl();
      reload();
    }}, label, active ? (dir === 'DESC' ? ' ▼' : ' ▲') : ''));
  }

  function renderTable() {
    const cols = state.columns;
    const pageIds = state.runs.map((r) => r.info.run_id);
    const allBox = h('input', {type: 'checkbox', 'aria-label': 'Select all runs on this page',
        checked: pageIds.length > 0 && pageIds.every((id) => state.selected.has(id)),
        onchange: (ev) => {
          for (const id of pageIds) {
            if (ev.target.checked) state.selected.add(id); else state.selected.delete(id);
          }
          renderTable();
        }});
    const head = h('tr', {}, h('th', {scope: 'col'}, allBox),
                   ATTRS.map((a) => sortButton(a.label, a.sort)),
                   cols.map((c) => {
                     const [kind, key] = [c.slice(0, c.indexOf(':')), c.slice(c.indexOf(':') + 1)];
                     return sortButton(`${kind}.${key}`, `${kind}.${quoteKey(key)}`);
                   }));
    const tbody = h('tbody', {}, state.runs.map((run) => {
      const info = run.info;
      const id = info.run_id;
      return h('tr', {'data-run': id, class: state.selected.has(id) ? 'selected' : null},
        h('td', {}, h('input', {type: 'checkbox', 'aria-label': `Select ${info.run_name || id}`,
                                checked: state.selected.has(id), onchange: (ev) => {
          if (ev.target.checked) state.selected.add(id); else state.selected.delete(id);
          ev.target.closest('tr').classList.toggle('selected', ev.target.checked);
          updateCompare();
        }})),
        h('td', {}, h('a', {href: `#/runs/${id}`}, info.run_name || id)),
        h('td', {}, h('span', {class: `status status-${info.status}`}, info.status)),
        h('td', {}, fmtTime(info.start_time)),
        h('td', {class: 'num'}, fmtDuration(runDuration(info))),
        h('td', {}, info.user_id || ''),
        cols.map((c) => h('td', {class: c.startsWith('metrics:') ? 'num' : null},
                          cellValue(run, c))));
    }));
    arrowNavigation(tbody);
    setChildren(tableBox, state.runs.length
        ? h('table', {class: 'grid', id: 'runs'},
            h('caption', {class: 'sr-only'}, 'Runs; use the column buttons to sort'),
            h('thead', {}, head), tbody)
        : message('No runs match.'));
    updateCompare();
  }

  function render() {
    learnKeys();
    renderColumnChooser();
    renderTable();
    const first = state.page * state.pageSize + 1;
    setChildren(pager,
      h('button', {type: 'button', id: 'prev-page', disabled: state.page === 0,
                   onclick: () => { state.page--; fetchPage(); }}, '← Previous'),
      h('span', {id: 'page-info', 'aria-live': 'polite'},
        state.runs.length ? `Runs ${first}–${first + state.runs.length - 1}` : ''),
      h('button', {type: 'button', id: 'next-page', disabled: !state.next,
                   onclick: () => { state.page++; fetchPage(); }}, 'Next →'));
  }

  await fetchPage();
}
