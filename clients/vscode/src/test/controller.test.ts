import * as assert from 'assert';
import { ClientSpec, Controller, ServerClient } from '../controller';
import * as vscode from './vscode-mock';

/** A language client that answers server commands from a table and records what it was sent. */
class FakeClient implements ServerClient {
  running = false;
  requests: { method: string; params: { command?: string; arguments?: unknown[] } }[] = [];
  notifications: { method: string; params: unknown }[] = [];
  constructor(
    readonly spec: ClientSpec,
    private readonly answers: Record<string, unknown>,
    private readonly failStart?: Error,
  ) {}
  starts = 0;
  start(): Promise<void> {
    this.starts++;
    if (this.failStart) {
      return Promise.reject(this.failStart);
    }
    this.running = true;
    return Promise.resolve();
  }
  stop(): Promise<void> {
    this.running = false;
    return Promise.resolve();
  }
  isRunning(): boolean {
    return this.running;
  }
  /** Commands named in `hang` never answer (a long LLM check), unless their token is cancelled. */
  hang = new Set<string>();
  tokens: ({ isCancellationRequested: boolean } | undefined)[] = [];
  sendRequest<R>(method: string, params: unknown, token?: { isCancellationRequested: boolean }): Promise<R> {
    const p = params as { command?: string; arguments?: unknown[] };
    this.requests.push({ method, params: p });
    this.tokens.push(token);
    if (p.command && this.hang.has(p.command)) {
      return new Promise<R>(() => undefined);
    }
    return Promise.resolve(this.answers[p.command ?? method] as R);
  }
  abandoned = false;
  abandon(): void {
    this.abandoned = true;
    this.running = false;
  }
  sendNotification(method: string, params: unknown): Promise<void> {
    this.notifications.push({ method, params });
    return Promise.resolve();
  }
  commandsSent(): string[] {
    return this.requests.map((r) => r.params.command ?? r.method);
  }
}

const STATUS = {
  index: { path: '/idx', ok: true, error: null, papers: 2213 },
  llm: { backend: null, model: null, error: null, configured: 'auto' },
  analyzed: {},
  embedded: 0,
  projects: [],
  analyzers: ['prior-work'],
};
const PAPERS = [
  { id: 'a', title: 'Attention Is All You Need', venue: 'NeurIPS', year: 2017, similarity: 0.71, url: 'https://papers.example/attention' },
  { id: 'b', title: 'Hierarchical Bi-Directional Self-Attention Networks', venue: 'COLING', year: 2020, similarity: 0.93, url: 'https://papers.example/hbsan' },
];
const ANSWERS: Record<string, unknown> = {
  'peerlint.status': STATUS,
  'peerlint.relatedWork': PAPERS,
  'peerlint.checkNovelty': { ok: true, score: 0.2, message: 'Close to 3 papers of 2019-2020.' },
  'peerlint.rankContributions': { ok: true, message: 'Contributions ranked by embedding, 5 rounds:\n1. (3 pts) A benchmark' },
  'peerlint.reindex': { path: '/idx', papers: 2213, chunks: 4000, embedded: 10, cached: 3990, seconds: 12.5 },
};

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('controller: server lifecycle and command wiring', () => {
  let clients: FakeClient[];
  let controller: Controller;
  let failStart: Error | undefined;

  function make(): Controller {
    controller = new Controller((spec) => {
      const client = new FakeClient(spec, ANSWERS, failStart);
      clients.push(client);
      return client;
    }, 0);
    return controller;
  }

  beforeEach(() => {
    vscode.reset();
    clients = [];
    failStart = undefined;
    // a command that exists on every machine running these tests
    vscode.userSettings['peerlint.server.command'] = process.execPath;
  });
  afterEach(async () => {
    await controller?.stop();
    controller?.dispose();
  });

  it('registers the palette commands', () => {
    make();
    assert.deepStrictEqual(vscode.commands.registered().sort(), [
      'peerlint.checkNoveltyOfSelection',
      'peerlint.rankContributionsAtCursor',
      'peerlint.rebuildIndex',
      'peerlint.restartServer',
      'peerlint.showRelatedWork',
      'peerlint.showStatus',
    ]);
  });

  it('starts the configured command with the settings as initializationOptions, then shows the status', async () => {
    vscode.userSettings['peerlint.indexPath'] = '/data/index';
    vscode.userSettings['peerlint.server.args'] = ['-m', 'peerlint', 'serve'];
    await make().start();
    await flush();
    assert.strictEqual(clients.length, 1);
    const spec = clients[0].spec;
    assert.deepStrictEqual(spec.server, { command: process.execPath, args: ['-m', 'peerlint', 'serve'] });
    assert.strictEqual(spec.initializationOptions.indexPath, '/data/index');
    assert.strictEqual(spec.initializationOptions.backend, 'auto');
    assert.ok(!('server.command' in spec.initializationOptions));
    assert.strictEqual(spec.outputChannel, controller.output);
    assert.strictEqual(controller.statusItem.text, '$(book) peerlint: 2,213 papers · auto');
    assert.strictEqual(controller.statusItem.command, 'peerlint.showStatus');
    assert.strictEqual(vscode.recorded.messages.length, 0);
  });

  it('answers workspace/configuration with the server settings only', async () => {
    vscode.userSettings['peerlint.targetVenue'] = 'ACL';
    await make().start();
    const answer = clients[0].spec.hooks.configuration();
    assert.strictEqual(answer.targetVenue, 'ACL');
    assert.ok(!Object.keys(answer).some((k) => k.startsWith('server') || k.startsWith('trace')));
  });

  it('shows one clear message with the install command when the server is missing', async () => {
    vscode.userSettings['peerlint.server.command'] = 'peerlint-not-installed-anywhere';
    vscode.answers.message = 'Copy install command';
    await make().start();
    await flush();
    assert.strictEqual(clients.length, 0);
    assert.strictEqual(controller.state, 'not-found');
    assert.strictEqual(vscode.recorded.messages.length, 1);
    const [msg] = vscode.recorded.messages;
    assert.strictEqual(msg.level, 'error');
    assert.match(msg.text, /"peerlint-not-installed-anywhere" was not found/);
    assert.match(msg.text, /pip install peerlint/);
    assert.deepStrictEqual(vscode.recorded.clipboard, ['pip install peerlint']);
    assert.strictEqual(controller.statusItem.text, '$(error) peerlint: server not found');
    // commands stay usable and explain instead of failing
    await vscode.commands.executeCommand('peerlint.showStatus');
    assert.strictEqual(vscode.recorded.messages.length, 2);
    assert.match(vscode.recorded.messages[1].text, /pip install peerlint/);
  });

  it('reports a server that fails to start, once', async () => {
    failStart = new Error('spawn EACCES');
    await make().start();
    assert.strictEqual(controller.state, 'failed');
    assert.strictEqual(vscode.recorded.messages.length, 1);
    assert.match(vscode.recorded.messages[0].text, /failed to start: spawn EACCES/);
    assert.strictEqual(controller.client, undefined);
  });

  it('restarts a crashing server three times, then stops and says why', async () => {
    await make().start();
    const hooks = clients[0].spec.hooks;
    for (let i = 1; i <= 3; i++) {
      clients[0].running = false; // the process died
      assert.strictEqual(hooks.onClosed().restart, true);
      assert.strictEqual(controller.statusItem.text, '$(sync~spin) peerlint: restarting');
      await new Promise((resolve) => setTimeout(resolve, 5));
      assert.strictEqual(clients[0].starts, 1 + i, 'the same client is started again');
      assert.strictEqual(controller.state, 'running');
    }
    assert.strictEqual(vscode.recorded.messages.length, 0);
    const last = hooks.onClosed();
    assert.strictEqual(last.restart, false);
    assert.strictEqual(controller.state, 'gave-up');
    assert.strictEqual(vscode.recorded.messages.length, 1);
    assert.match(vscode.recorded.messages[0].text, /stopped 4 times in 3 minutes, so it will not be restarted/);
    assert.deepStrictEqual(vscode.recorded.messages[0].items, ['Show log', 'Restart server']);
    assert.strictEqual(controller.statusItem.text, '$(error) peerlint: stopped');
    // 'Restart server' starts a fresh client and forgets the crashes
    await vscode.commands.executeCommand('peerlint.restartServer');
    assert.strictEqual(clients.length, 2);
    assert.strictEqual(controller.state, 'running');
    assert.strictEqual(clients[1].spec.hooks.onClosed().restart, true);
  });

  it('Check novelty sends the selection (start and end) and shows the answer', async () => {
    await make().start();
    vscode.window.activeTextEditor = vscode.latexEditor('file:///paper/draft.tex', 12, 4, 'latex', [14, 0]);
    await vscode.commands.executeCommand('peerlint.checkNoveltyOfSelection');
    const req = clients[0].requests.find((r) => r.params.command === 'peerlint.checkNovelty');
    assert.ok(req);
    assert.strictEqual(req.method, 'workspace/executeCommand');
    assert.deepStrictEqual(req.params.arguments, [
      { uri: 'file:///paper/draft.tex', line: 12, character: 4, end: { line: 14, character: 0 } },
    ]);
    assert.deepStrictEqual(vscode.recorded.messages.map((m) => m.text), ['peerlint: Close to 3 papers of 2019-2020.']);
  });

  it('Check novelty runs under a cancellable notification; Cancel frees the command at once', async () => {
    await make().start();
    clients[0].hang.add('peerlint.checkNovelty');
    vscode.window.activeTextEditor = vscode.latexEditor('file:///paper/draft.tex', 12, 4, 'latex');
    const running = vscode.commands.executeCommand('peerlint.checkNoveltyOfSelection');
    await flush();
    assert.deepStrictEqual(vscode.recorded.progress.map((p) => [p.options.title, p.options.cancellable, p.options.location]),
      [['peerlint: checking novelty', true, vscode.ProgressLocation.Notification]]);
    const token = clients[0].tokens[clients[0].requests.findIndex((r) => r.params.command === 'peerlint.checkNovelty')];
    assert.ok(token && !token.isCancellationRequested, 'the request carries the notification\'s cancellation token');
    vscode.recorded.progress[0].source.cancel();
    assert.strictEqual(await running, undefined);
    assert.ok(token.isCancellationRequested);
    assert.deepStrictEqual(vscode.recorded.messages.map((m) => m.text), ['peerlint: checking novelty: cancelled.']);
    clients[0].hang.clear();
    await vscode.commands.executeCommand('peerlint.checkNoveltyOfSelection');
    assert.deepStrictEqual(vscode.recorded.messages.map((m) => m.text).slice(-1), ['peerlint: Close to 3 papers of 2019-2020.']);
  });

  it('Rank contributions sends the cursor and writes the ranking to the output channel', async () => {
    const c = make();
    await c.start();
    vscode.window.activeTextEditor = vscode.latexEditor('file:///paper/draft.tex', 20, 6, 'latex');
    await vscode.commands.executeCommand('peerlint.rankContributionsAtCursor');
    const req = clients[0].requests.find((r) => r.params.command === 'peerlint.rankContributions');
    assert.deepStrictEqual(req?.params.arguments, [{ uri: 'file:///paper/draft.tex', line: 20, character: 6 }]);
    const lines = (c.output as unknown as { lines: string[] }).lines;
    assert.ok(lines.some((l) => l.includes('1. (3 pts) A benchmark')), lines.join('\n'));
    assert.deepStrictEqual(vscode.recorded.messages.map((m) => m.text), ['peerlint: contributions ranked (see the peerlint output).']);
  });

  it('Show related work lists the papers and opens the one picked', async () => {
    await make().start();
    vscode.window.activeTextEditor = vscode.latexEditor('file:///paper/draft.tex', 30, 0, 'tex');
    vscode.answers.quickPick = (items) => items[1];
    await vscode.commands.executeCommand('peerlint.showRelatedWork');
    const req = clients[0].requests.find((r) => r.params.command === 'peerlint.relatedWork');
    assert.deepStrictEqual(req?.params.arguments, [{ uri: 'file:///paper/draft.tex', line: 30, character: 0 }]);
    assert.strictEqual(vscode.recorded.quickPicks.length, 1);
    const items = vscode.recorded.quickPicks[0].items as { label: string; description: string; detail: string }[];
    assert.deepStrictEqual(items.map((i) => i.label), PAPERS.map((p) => p.title));
    assert.strictEqual(items[1].description, 'COLING 2020');
    assert.strictEqual(items[1].detail, 'similarity 0.930 · https://papers.example/hbsan');
    assert.deepStrictEqual(vscode.recorded.opened, ['https://papers.example/hbsan']);
  });

  it('the same list appears when a code action runs peerlint.relatedWork', async () => {
    await make().start();
    vscode.answers.quickPick = () => undefined;
    clients[0].spec.hooks.onCommandResult('peerlint.relatedWork', PAPERS);
    await flush();
    assert.strictEqual(vscode.recorded.quickPicks.length, 1);
    assert.deepStrictEqual(vscode.recorded.opened, []);
  });

  it('position commands ask for a LaTeX editor instead of sending a request', async () => {
    await make().start();
    vscode.window.activeTextEditor = vscode.latexEditor('file:///notes.md', 0, 0, 'markdown');
    await vscode.commands.executeCommand('peerlint.showRelatedWork');
    assert.ok(!clients[0].commandsSent().includes('peerlint.relatedWork'));
    assert.match(vscode.recorded.messages[0].text, /open a LaTeX file/);
  });

  it('Rebuild index runs peerlint.reindex and summarises the build', async () => {
    await make().start();
    await vscode.commands.executeCommand('peerlint.rebuildIndex');
    assert.ok(clients[0].commandsSent().includes('peerlint.reindex'));
    assert.deepStrictEqual(vscode.recorded.messages.map((m) => m.text), [
      'peerlint: index rebuilt: 2213 papers, 4000 chunks (10 newly embedded) in 13 s.',
    ]);
  });

  it('Show status prints the JSON in the output channel', async () => {
    await make().start();
    const status = await vscode.commands.executeCommand('peerlint.showStatus');
    assert.deepStrictEqual(status, STATUS);
    const out = (controller.output as unknown as vscode.MockOutputChannel).lines.join('\n');
    assert.ok(out.includes(JSON.stringify(STATUS, null, 2)));
    assert.ok((controller.output as unknown as vscode.MockOutputChannel).shown > 0);
  });

  it('shows LLM progress in the status bar and refreshes the status when it ends', async () => {
    await make().start();
    await flush();
    const hooks = clients[0].spec.hooks;
    hooks.onProgress('t1', { kind: 'begin', title: 'peerlint: LLM checks' });
    assert.strictEqual(controller.statusItem.text, '$(sync~spin) peerlint: LLM checks');
    const before = clients[0].commandsSent().filter((c) => c === 'peerlint.status').length;
    hooks.onProgress('t1', { kind: 'end', message: 'done' });
    await flush();
    assert.strictEqual(controller.statusItem.text, '$(book) peerlint: 2,213 papers · auto');
    assert.strictEqual(clients[0].commandsSent().filter((c) => c === 'peerlint.status').length, before + 1);
  });

  it('pushes changed settings to the running server', async () => {
    await make().start();
    await vscode.setSetting('peerlint.backend', 'ollama');
    const sent = clients[0].notifications.find((n) => n.method === 'workspace/didChangeConfiguration');
    assert.ok(sent);
    const settings = (sent.params as { settings: { peerlint: Record<string, unknown> } }).settings.peerlint;
    assert.strictEqual(settings.backend, 'ollama');
    assert.strictEqual(clients.length, 1);
  });

  it('restarts the server when its command changes', async () => {
    await make().start();
    await vscode.setSetting('peerlint.server.args', ['serve', '--log-file', '/tmp/peerlint.log']);
    assert.strictEqual(clients.length, 2);
    assert.strictEqual(clients[0].running, false);
    assert.deepStrictEqual(clients[1].spec.server.args, ['serve', '--log-file', '/tmp/peerlint.log']);
  });
});
