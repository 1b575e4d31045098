// #/models : the Model Registry's models (name, latest version per stage, aliases, last update).
// #/models/{name} : one model's versions: stage, aliases, the run each came from, its source.
import {getRegisteredModel, modelVersions, searchRegisteredModels} from '../api.js';
import {arrowNavigation, fmtTime, h, message, setChildren} from '../dom.js';

function aliasList(aliases) {
  return (aliases || []).map((a) => h('span', {class: 'alias'}, '@' + (a.alias || a)));
}

export async function modelsView(main) {
  setChildren(main, h('h1', {}, 'Models'), message('Loading…'));
  const models = [];
  let next = null;
  do {
    const page = await searchRegisteredModels(next);
    models.push(...page.models);
    next = page.next;
  } while (next);
  if (!models.length) {
    setChildren(main, h('h1', {}, 'Models'),
                message('No registered models yet. Register one with mlflow.register_model.'));
    return;
  }
  const tbody = h('tbody', {}, models.map((m) => {
    const latest = (m.latest_versions || []).map((v) => `v${v.version} ${v.current_stage}`);
    return h('tr', {'data-model': m.name},
             h('td', {}, h('a', {href: `#/models/${encodeURIComponent(m.name)}`}, m.name)),
             h('td', {}, latest.join(', ')),
             h('td', {}, aliasList((m.aliases || []).map((a) => `${a.alias} → v${a.version}`))),
             h('td', {}, fmtTime(m.last_updated_timestamp)));
  }));
  arrowNavigation(tbody);
  setChildren(main, h('h1', {}, 'Models'),
              h('table', {class: 'grid', id: 'models'},
                h('caption', {class: 'sr-only'}, 'Registered models'),
                h('thead', {}, h('tr', {}, ['Name', 'Latest versions', 'Aliases', 'Last update'].map(
                    (t) => h('th', {scope: 'col'}, t)))),
                tbody));
}

export async function modelView(main, params) {
  const name = params.id;
  const [model, versions] = await Promise.all([getRegisteredModel(name), modelVersions(name)]);
  const crumbs = h('p', {class: 'crumbs'}, h('a', {href: '#/models'}, 'Models'));
  const rows = versions.map((v) => h('tr', {'data-version': v.version},
      h('td', {class: 'num'}, `v${v.version}`),
      h('td', {}, v.current_stage),
      h('td', {}, aliasList(v.aliases)),
      h('td', {}, v.run_id ? h('a', {href: `#/runs/${encodeURIComponent(v.run_id)}`},
                              v.run_id.slice(0, 8)) : ''),
      h('td', {}, h('code', {}, v.source || '')),
      h('td', {}, fmtTime(v.creation_timestamp)),
      h('td', {}, v.description || '')));
  setChildren(main, crumbs, h('h1', {}, model.name),
              model.description ? h('p', {class: 'description'}, model.description) : null,
              versions.length
                  ? h('table', {class: 'grid', id: 'versions'},
                      h('caption', {class: 'sr-only'}, `Versions of ${model.name}`),
                      h('thead', {}, h('tr', {}, ['Version', 'Stage', 'Aliases', 'Source run',
                                                  'Source', 'Registered', 'Description'].map(
                          (t) => h('th', {scope: 'col'}, t)))),
                      h('tbody', {}, rows))
                  : message('No versions yet.'));
}
