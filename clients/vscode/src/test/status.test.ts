import * as assert from 'assert';
import { ProgressTracker, statusView } from '../status';

describe('status bar', () => {
  it('shows papers and backend when the index is loaded', () => {
    const view = statusView({
      index: { ok: true, papers: 2213, path: '/idx', error: null },
      llm: { backend: null, model: null, error: null, configured: 'auto' },
      analyzers: ['prior-work'],
    });
    assert.strictEqual(view.text, '$(book) peerlint: 2,213 papers · auto');
    assert.match(view.tooltip, /2,213 papers in \/idx/);
    assert.match(view.tooltip, /Analyzers: prior-work/);
  });

  it('shows the running backend and its problem', () => {
    const view = statusView({
      index: { ok: true, papers: 10, path: '/idx' },
      llm: { backend: 'ollama', model: 'qwen2.5:7b', error: 'Ollama is not reachable', configured: 'ollama' },
    });
    assert.strictEqual(view.text, '$(book) peerlint: 10 papers · ollama $(warning)');
    assert.match(view.tooltip, /ollama \(qwen2\.5:7b\) — Ollama is not reachable/);
  });

  it('says when there is no index, with the reason in the tooltip', () => {
    const view = statusView({ index: { ok: false, error: 'no index at /x: run peerlint index build' } });
    assert.strictEqual(view.text, '$(warning) peerlint: no index');
    assert.match(view.tooltip, /peerlint index build/);
  });

  it('tracks LLM progress until the last piece of work ends', () => {
    const p = new ProgressTracker();
    assert.strictEqual(p.text(), undefined);
    assert.strictEqual(p.update('a', { kind: 'begin', title: 'peerlint: LLM checks' }), false);
    assert.strictEqual(p.text(), '$(sync~spin) peerlint: LLM checks');
    p.update('a', { kind: 'report', percentage: 40 });
    assert.strictEqual(p.text(), '$(sync~spin) peerlint: LLM checks 40%');
    p.update('b', { kind: 'begin', title: 'peerlint: checking novelty' });
    assert.strictEqual(p.text(), '$(sync~spin) peerlint: checking novelty (+1)');
    assert.strictEqual(p.update('b', { kind: 'end' }), false);
    assert.strictEqual(p.update('a', { kind: 'end', message: 'done' }), true);
    assert.strictEqual(p.text(), undefined);
  });
});
