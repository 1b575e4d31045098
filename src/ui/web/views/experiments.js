// #/ : the experiments, newest first, each a link to its runs table.
import {allExperiments} from '../api.js';
import {arrowNavigation, fmtTime, h, message, setChildren} from '../dom.js';

export async function experimentsView(main) {
  setChildren(main, h('h1', {}, 'Experiments'), message('Loading…'));
  const exps = await allExperiments();
  if (!exps.length) {
    setChildren(main, h('h1', {}, 'Experiments'),
                message('No experiments yet. Log a run with ferry.track or any MLflow client.'));
    return;
  }
  const tbody = h('tbody', {}, exps.map((e) => h('tr', {},
      h('td', {}, h('a', {href: `#/experiments/${encodeURIComponent(e.experiment_id)}`},
                    e.name || `(experiment ${e.experiment_id})`)),
      h('td', {class: 'num'}, e.experiment_id),
      h('td', {}, fmtTime(e.creation_time)),
      h('td', {}, fmtTime(e.last_update_time)))));
  arrowNavigation(tbody);
  setChildren(main, h('h1', {}, 'Experiments'),
              h('table', {class: 'grid', id: 'experiments'},
                h('caption', {class: 'sr-only'}, 'Experiments'),
                h('thead', {}, h('tr', {}, ['Name', 'ID', 'Created', 'Last update'].map(
                    (t) => h('th', {scope: 'col'}, t)))),
                tbody));
}
