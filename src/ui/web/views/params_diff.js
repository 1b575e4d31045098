// The compare view's parameters table: one row per param, one column per run; a row whose
// values differ (or that some runs lack) is marked (≠, and a tint), and "Only differing
// params" hides the rest. Values are text, never markup.
import {h, setChildren} from '../dom.js';

// rows: [{key, values: [string|null per run], differs}], sorted by key.
export function paramRows(runs) {
  const keys = new Set();
  const maps = runs.map((r) => new Map((r.data?.params || []).map((p) => [p.key, p.value])));
  maps.forEach((m) => m.forEach((_, k) => keys.add(k)));
  return [...keys].sort().map((key) => {
    const values = maps.map((m) => (m.has(key) ? m.get(key) : null));
    return {key, values, differs: new Set(values).size > 1};
  });
}

// runs: [{id, name, color, run}] (run: the API's run).
export function paramsDiffSection(runs) {
  const rows = paramRows(runs.map((r) => r.run));
  const nDiff = rows.filter((r) => r.differs).length;
  const only = h('input', {type: 'checkbox', id: 'params-only-diff', checked: nDiff > 0 &&
                           rows.length > 12});
  const box = h('div', {class: 'table-box'});
  function render() {
    const shown = only.checked ? rows.filter((r) => r.differs) : rows;
    setChildren(box, h('table', {class: 'grid', id: 'params-diff'},
      h('caption', {class: 'sr-only'}, 'Parameters of the compared runs'),
      h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Param'),
        runs.map((r) => h('th', {scope: 'col'},
          h('span', {class: 'swatch', style: {background: r.color}, 'aria-hidden': 'true'}),
          r.name)))),
      h('tbody', {}, shown.map((row) => h('tr', {class: row.differs ? 'differs' : null,
                                                'data-key': row.key},
        h('th', {scope: 'row'}, row.differs ? h('span', {class: 'diff-mark',
                                                         title: 'values differ'}, '≠ ') : '',
          row.key),
        row.values.map((v) => h('td', {}, v === null ? '—' : v)))))));
  }
  only.addEventListener('change', render);
  render();
  return h('section', {id: 'params', 'aria-labelledby': 'params-h'},
    h('h2', {id: 'params-h'}, 'Parameters'),
    h('div', {class: 'toolbar'},
      h('label', {class: 'check'}, only, 'Only differing params'),
      h('span', {class: 'help'}, `${nDiff} of ${rows.length} differ`)),
    rows.length ? box : h('p', {class: 'help'}, 'No parameters logged.'));
}
