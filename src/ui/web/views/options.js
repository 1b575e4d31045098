// The chart controls shared by the run page and the compare view: x axis, smoothing, log
// scale and min/max bands. Changes call onChange(what) and are remembered in localStorage.
import {h} from '../dom.js';

export function defaultOptions() {
  const saved = JSON.parse(localStorage.getItem('ferry.chartOptions') || '{}');
  return {xmode: 'step', smoothing: 0, log: false, bands: true, ...saved};
}

export function chartOptionsBar(options, onChange) {
  const save = (what) => {
    localStorage.setItem('ferry.chartOptions', JSON.stringify(options));
    onChange(what);
  };
  const smoothOut = h('output', {for: 'opt-smoothing'}, options.smoothing.toFixed(2));
  return h('div', {class: 'toolbar chart-options', role: 'group', 'aria-label': 'Chart options'},
    h('label', {for: 'opt-xmode'}, 'X axis'),
    h('select', {id: 'opt-xmode', onchange: (ev) => { options.xmode = ev.target.value; save('xmode'); }},
      [['step', 'Step'], ['relative', 'Time since start'], ['wall', 'Wall time']].map(
          ([v, t]) => h('option', {value: v, selected: options.xmode === v}, t))),
    h('label', {for: 'opt-smoothing'}, 'Smoothing'),
    h('input', {type: 'range', id: 'opt-smoothing', min: 0, max: 0.99, step: 0.01,
                value: options.smoothing, oninput: (ev) => {
      options.smoothing = Number(ev.target.value);
      smoothOut.textContent = options.smoothing.toFixed(2);
      save('smoothing');
    }}), smoothOut,
    h('label', {class: 'check'}, h('input', {type: 'checkbox', id: 'opt-log', checked: options.log,
        onchange: (ev) => { options.log = ev.target.checked; save('log'); }}), 'Log scale'),
    h('label', {class: 'check'}, h('input', {type: 'checkbox', id: 'opt-bands',
        checked: options.bands,
        onchange: (ev) => { options.bands = ev.target.checked; save('bands'); }}), 'Min/max bands'),
    h('span', {class: 'help'},
      'Drag across a chart to zoom (finer data is fetched); double-click to reset.'));
}
