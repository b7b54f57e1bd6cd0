import * as assert from 'assert';
import { CloseAction, ErrorAction, LanguageClient } from 'vscode-languageclient/node';
import { ClientHooks } from '../controller';
import { DOCUMENT_SELECTOR, createClient } from '../extension';
import { CloseDecision } from '../restart';
import { ProgressValue } from '../status';
import * as vscode from './vscode-mock';

// The real vscode-languageclient, built (not started) on the mock: checks how the hooks are wired.
describe('extension: the LanguageClient it builds', () => {
  let decision: CloseDecision;
  const calls = { progress: [] as [string | number, ProgressValue][], results: [] as [string, unknown][] };
  const hooks: ClientHooks = {
    onClosed: () => decision,
    onProgress: (token, value) => void calls.progress.push([token, value]),
    onCommandResult: (command, result) => void calls.results.push([command, result]),
    configuration: () => ({ indexPath: '/idx' }),
  };
  const client = createClient({
    server: { command: '/opt/peerlint/bin/peerlint', args: ['serve'] },
    initializationOptions: { indexPath: '/idx', backend: 'auto' },
    outputChannel: vscode.window.createOutputChannel('peerlint') as never,
    hooks,
  }) as LanguageClient;
  const options = client.clientOptions;

  it('serves LaTeX documents with the settings as initializationOptions, over stdio', () => {
    assert.deepStrictEqual(options.documentSelector, DOCUMENT_SELECTOR);
    assert.deepStrictEqual(options.initializationOptions, { indexPath: '/idx', backend: 'auto' });
    const server = (client as unknown as { _serverOptions: { command: string; args: string[]; transport?: unknown } })._serverOptions;
    assert.strictEqual(server.command, '/opt/peerlint/bin/peerlint');
    assert.deepStrictEqual(server.args, ['serve']);
    assert.strictEqual(server.transport, undefined, 'TransportKind.stdio would append --stdio, which peerlint serve rejects');
    assert.strictEqual(client.name, 'peerlint');
  });

  it('never restarts on its own (the controller does), and says nothing the controller says', async () => {
    decision = { restart: true, message: 'restarting (1 of 3)' };
    assert.deepStrictEqual(await options.errorHandler!.closed(), { action: CloseAction.DoNotRestart, message: 'restarting (1 of 3)', handled: true });
    decision = { restart: false, message: 'gave up' };
    assert.deepStrictEqual(await options.errorHandler!.closed(), { action: CloseAction.DoNotRestart, message: 'gave up', handled: true });
    assert.strictEqual(options.initializationFailedHandler!(new Error('x')), false);
    assert.strictEqual((await options.errorHandler!.error(new Error('x'), undefined, 1)).action, ErrorAction.Continue);
    assert.strictEqual((await options.errorHandler!.error(new Error('x'), undefined, 5)).action, ErrorAction.Shutdown);
  });

  it('answers workspace/configuration for "peerlint" with the server settings, other sections untouched', async () => {
    const configuration = options.middleware!.workspace!.configuration!;
    const whole = { indexPath: '/idx', server: { command: 'peerlint' }, trace: { server: 'off' } };
    const answer = await configuration(
      { items: [{ section: 'peerlint' }, { section: 'editor' }] },
      {} as never,
      () => [whole, { tabSize: 2 }],
    );
    assert.deepStrictEqual(answer, [{ indexPath: '/idx' }, { tabSize: 2 }]);
  });

  it("shows the result of a server command a code action ran, and reports $/progress", async () => {
    const papers = [{ title: 'A paper' }];
    const result = await options.middleware!.executeCommand!('peerlint.relatedWork', [{}], () => Promise.resolve(papers));
    assert.strictEqual(result, papers);
    assert.deepStrictEqual(calls.results, [['peerlint.relatedWork', papers]]);
    let forwarded = 0;
    options.middleware!.handleWorkDoneProgress!('tok', { kind: 'begin', title: 'peerlint: LLM checks' }, () => void forwarded++);
    assert.deepStrictEqual(calls.progress, [['tok', { kind: 'begin', title: 'peerlint: LLM checks' }]]);
    assert.strictEqual(forwarded, 1, 'VS Code still gets its own progress display');
  });
});
