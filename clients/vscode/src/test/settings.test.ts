import * as assert from 'assert';
import * as path from 'path';
import manifest from '../../package.json';
import {
  CLIENT_KEYS,
  SERVER_KEYS,
  findExecutable,
  missingServerMessage,
  serverCommand,
  serverSettings,
} from '../settings';
import * as vscode from './vscode-mock';

type Prop = { default?: unknown; description?: string; markdownDescription?: string; type?: string };
const props = manifest.contributes.configuration.properties as Record<string, Prop>;
// tests/test_vscode_client.py checks these keys and defaults against server/config.py's Settings
const SERVER_DEFAULTS = Object.fromEntries(SERVER_KEYS.map((k) => [k, props['peerlint.' + k].default]));
const SOME_SERVER_KEYS = ['indexPath', 'backend', 'model', 'ollamaHost', 'targetVenue', 'analyzers', 'severity', 'debounceMs'];

describe('settings mapping', () => {
  beforeEach(() => vscode.reset());

  it('contributes the server settings, and only the client keys besides', () => {
    for (const key of SOME_SERVER_KEYS) {
      assert.ok(SERVER_KEYS.includes(key), key);
    }
    assert.deepStrictEqual(
      Object.keys(props).sort(),
      [...SERVER_KEYS, ...CLIENT_KEYS].map((k) => 'peerlint.' + k).sort(),
    );
  });

  it('gives each setting a description and a default', () => {
    for (const key of [...SERVER_KEYS, ...CLIENT_KEYS]) {
      const p = props['peerlint.' + key];
      assert.ok(p.description || p.markdownDescription, `peerlint.${key} has no description`);
      assert.ok(p.default !== undefined, `peerlint.${key} has no default`);
    }
    assert.deepStrictEqual(props['peerlint.severity'].default, {
      'close-prior-work': 'warning',
      'missing-related-work': 'information',
      'weak-chunk': 'information',
      'off-venue-style': 'information',
      novelty: 'information',
    });
  });

  it('sends the defaults when nothing is set', () => {
    const sent = serverSettings(vscode.workspace.getConfiguration('peerlint'));
    assert.deepStrictEqual(sent, SERVER_DEFAULTS);
  });

  it('sends user values under their camelCase names, and never the client keys', () => {
    vscode.userSettings['peerlint.backend'] = 'ollama';
    vscode.userSettings['peerlint.model'] = 'qwen2.5:7b';
    vscode.userSettings['peerlint.ollamaHost'] = 'http://127.0.0.1:11434';
    vscode.userSettings['peerlint.severity'] = { 'close-prior-work': 'error' };
    vscode.userSettings['peerlint.server.command'] = '/opt/peerlint/bin/peerlint';
    const sent = serverSettings(vscode.workspace.getConfiguration('peerlint'));
    assert.strictEqual(sent.backend, 'ollama');
    assert.strictEqual(sent.model, 'qwen2.5:7b');
    assert.strictEqual(sent.ollamaHost, 'http://127.0.0.1:11434');
    assert.deepStrictEqual(sent.severity, { 'close-prior-work': 'error' });
    assert.ok(!('server' in sent) && !('server.command' in sent) && !('trace.server' in sent));
  });

  it('passes wrong types through for the server to report (it names the setting and keeps the old value)', () => {
    vscode.userSettings['peerlint.debounceMs'] = 'fast';
    const sent = serverSettings(vscode.workspace.getConfiguration('peerlint'));
    assert.strictEqual(sent.debounceMs, 'fast');
  });

  it('copies objects, so the answer is plain JSON', () => {
    const frozen = Object.freeze({ myenv: 'ignore' });
    vscode.userSettings['peerlint.latexEnvironments'] = frozen;
    const sent = serverSettings(vscode.workspace.getConfiguration('peerlint'));
    assert.deepStrictEqual(sent.latexEnvironments, { myenv: 'ignore' });
    assert.notStrictEqual(sent.latexEnvironments, frozen);
  });

  it('starts `peerlint serve` by default, or any interpreter with its arguments', () => {
    assert.deepStrictEqual(serverCommand(vscode.workspace.getConfiguration('peerlint')), { command: 'peerlint', args: ['serve'] });
    vscode.userSettings['peerlint.server.command'] = '/venv/bin/python';
    vscode.userSettings['peerlint.server.args'] = ['-m', 'peerlint', 'serve', '--log-file', '/tmp/p.log'];
    assert.deepStrictEqual(serverCommand(vscode.workspace.getConfiguration('peerlint')), {
      command: '/venv/bin/python',
      args: ['-m', 'peerlint', 'serve', '--log-file', '/tmp/p.log'],
    });
  });

  it('finds the server on PATH like a shell, or not at all', () => {
    const files = new Set([path.join('/b', 'peerlint'), '/abs/peerlint']);
    const isFile = (p: string) => files.has(p);
    const env = { PATH: ['/a', '/b'].join(path.delimiter) };
    assert.strictEqual(findExecutable('peerlint', env, isFile), path.join('/b', 'peerlint'));
    assert.strictEqual(findExecutable('/abs/peerlint', env, isFile), '/abs/peerlint');
    assert.strictEqual(findExecutable('/missing/peerlint', env, isFile), undefined);
    assert.strictEqual(findExecutable('peerlint', { PATH: '/a' }, isFile), undefined);
    assert.strictEqual(findExecutable('', env, isFile), undefined);
    assert.ok(findExecutable(process.execPath), 'the running node is an executable file');
  });

  it('says how to install the server when it is missing', () => {
    const text = missingServerMessage('peerlint');
    assert.match(text, /"peerlint" was not found/);
    assert.match(text, /pip install peerlint/);
    assert.match(text, /make install/);
    assert.match(text, /peerlint\.server\.command/);
  });
});
