// Unit tests of the UI's pure data functions (src/ui/web/series.js) under node:
//   node --test tests/ui/series_test.mjs      (run by tests/cli/test_ui.py)
import assert from 'node:assert/strict';
import test from 'node:test';
import {fmtSeconds, rankKeys, sectionOf, smooth, stepRangeFor, toColumns,
        xOf} from '../../src/ui/web/series.js';

const pts = (pairs) => pairs.map(([step, value]) => ({step, value, timestamp: 1000 + step, x: step}));

test('few points keep their exact x values', () => {
  const series = [{id: 'a', points: pts([[0, 1], [5, 2]])}, {id: 'b', points: pts([[5, 3]])}];
  const c = toColumns(series, 0, 5, 100, false);
  assert.deepEqual(c.x, [0, 5]);
  assert.deepEqual(c.runs[0].mean, [1, 2]);
  assert.deepEqual(c.runs[1].mean, [null, 3]);
});

test('a one-step spike among many points keeps its height in its column', () => {
  const many = [];
  for (let s = 0; s < 10000; s++) many.push([s, s === 4321 ? 50 : 1]);
  const c = toColumns([{id: 'a', points: pts(many)}], 0, 9999, 100, false);
  assert.equal(c.x.length, 100);
  const col = Math.floor(4321 / 100);
  assert.equal(c.runs[0].max[col], 50);
  assert.equal(c.runs[0].min[col], 1);
  assert.ok(c.runs[0].mean[col] > 1);
  assert.equal(Math.max(...c.runs[0].max), 50);
});

test('log scale drops values that are not positive', () => {
  const c = toColumns([{id: 'a', points: pts([[0, -1], [1, 0], [2, 10]])}], 0, 2, 10, true);
  assert.deepEqual(c.runs[0].mean, [null, null, 10]);
});

test('smoothing is a debiased EMA that skips gaps', () => {
  assert.deepEqual(smooth([1, null, 1], 0.9), [1, null, 1]);
  const s = smooth([0, 10], 0.5);
  assert.equal(s[0], 0);
  assert.ok(Math.abs(s[1] - 5 / 0.75) < 1e-9);
  assert.deepEqual(smooth([3, 4], 0), [3, 4]);
});

test('x modes and zoom ranges on a time axis map back to steps', () => {
  const p = {step: 7, timestamp: 5000};
  assert.equal(xOf('step', p, 0), 7);
  assert.equal(xOf('relative', p, 3000), 2);
  assert.equal(xOf('wall', p, 0), 5);
  const s = [{id: 'a', points: pts([[0, 1], [10, 1], [20, 1], [30, 1]])}];
  assert.deepEqual(stepRangeFor(s, 12, 22), [10, 30]);
  assert.equal(stepRangeFor(s, 100, 200), null);
});

test('metric keys fall into the run page sections', () => {
  assert.equal(sectionOf('loss'), 'Metrics');
  assert.equal(sectionOf('system/gpu_0_utilization_percentage'), 'GPU');
  assert.equal(sectionOf('system/cpu_utilization_percentage'), 'System');
  assert.equal(sectionOf('data/train/wait_fraction'), 'Data');
});

test('keys users look at first come first, pinned ones before them', () => {
  const keys = ['data/train/wait_fraction', 'system/gpu_0_utilization_percentage', 'acc',
                'system/cpu_utilization_percentage', 'epoch_time', 'val/loss', 'loss', 'lr',
                'eval/f1', 'val_accuracy'];
  assert.deepEqual(rankKeys(keys), ['loss', 'val/loss', 'acc', 'val_accuracy', 'eval/f1', 'lr',
                                    'epoch_time', 'data/train/wait_fraction',
                                    'system/cpu_utilization_percentage',
                                    'system/gpu_0_utilization_percentage']);
  assert.deepEqual(rankKeys(['loss', 'acc', 'data/x'], ['data/x', 'acc']), ['data/x', 'acc', 'loss']);
});

test('seconds read as clock times', () => {
  assert.deepEqual([0, 45, 125, 3725, 2.5, -30].map(fmtSeconds),
                   ['0s', '45s', '2:05', '1:02:05', '2.5s', '-30s']);
});
