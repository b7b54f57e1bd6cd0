// The extension's real LanguageClient (vscode-languageclient) over stdio, with only the `vscode`
// module mocked: a server that crashes on start, and — when tests/test_vscode_client.py passes
// PEERLINT_TEST_SERVER — the real peerlint server on the example draft.
import * as assert from 'assert';
import { execSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Controller } from '../controller';
import { createClient } from '../extension';
import * as vscode from './vscode-mock';

async function until(what: string, ms: number, cond: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) {
      throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('integration: the real language client over stdio', function () {
  let controller: Controller | undefined;

  beforeEach(() => vscode.reset());
  afterEach(async () => {
    await controller?.stop();
    controller?.dispose();
    controller = undefined;
    vscode.workspace.textDocuments = [];
    vscode.workspace.workspaceFolders = undefined;
    vscode.diagnostics.clear();
  });

  it('restarts a server that dies on start 3 times, then stops with one message', async function () {
    this.timeout(60000);
    const starts = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'peerlint-vscode-')), 'starts');
    vscode.userSettings['peerlint.server.command'] = process.execPath;
    vscode.userSettings['peerlint.server.args'] = ['-e', `require('fs').appendFileSync(${JSON.stringify(starts)}, 'x'); process.exit(3)`];
    controller = new Controller(createClient, 50);
    await controller.start();
    await until('the controller to give up', 45000, () => controller!.state === 'gave-up');
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing else may follow
    assert.strictEqual(fs.readFileSync(starts, 'utf8'), 'xxxx', 'started once and restarted 3 times');
    assert.deepStrictEqual(vscode.recorded.messages.map((m) => m.level), ['error'], JSON.stringify(vscode.recorded.messages));
    assert.match(vscode.recorded.messages[0].text, /^peerlint: the language server stopped 4 times in 3 minutes, so it will not be restarted again/);
    assert.strictEqual(controller.statusItem.text, '$(error) peerlint: stopped');
    const log = (controller.output as unknown as vscode.MockOutputChannel).lines.join('\n');
    assert.match(log, /restarting it \(3 of 3\)/);
  });

  it('a server command that runs but never answers: one message after the start timeout, then commands explain', async function () {
    this.timeout(20000);
    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'peerlint-vscode-')), 'pid');
    vscode.userSettings['peerlint.server.command'] = process.execPath;
    vscode.userSettings['peerlint.server.args'] = ['-e', `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`];
    controller = new Controller(createClient, 50, 2000);
    await controller.start();
    assert.strictEqual(controller.state, 'failed');
    await new Promise((resolve) => setTimeout(resolve, 1000)); // nothing else may follow
    assert.deepStrictEqual(vscode.recorded.messages.map((m) => m.level), ['error'], JSON.stringify(vscode.recorded.messages));
    assert.match(vscode.recorded.messages[0].text, /failed to start: it did not answer within 2 s; is '.*' the peerlint server/);
    assert.strictEqual(controller.statusItem.text, '$(error) peerlint: failed to start');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    assert.throws(() => process.kill(pid, 0), /ESRCH/, 'the silent server process was killed');
    await vscode.commands.executeCommand('peerlint.showStatus');
    assert.strictEqual(vscode.recorded.messages.length, 2);
    assert.match(vscode.recorded.messages[1].text, /not running\. Run 'peerlint: Restart server'/);
  });

  const real = process.env.PEERLINT_TEST_SERVER;
  const spec = real ? (JSON.parse(real) as { command: string; args: string[]; indexPath: string; draft: string }) : undefined;

  /** The real server with `docs` open in the workspace folder `folder`, and settings `settings`. */
  async function startReal(folder: string, docs: string[], settings: Record<string, unknown> = {}): Promise<Controller> {
    vscode.userSettings['peerlint.server.command'] = spec!.command;
    vscode.userSettings['peerlint.server.args'] = spec!.args;
    vscode.userSettings['peerlint.indexPath'] = spec!.indexPath;
    Object.assign(vscode.userSettings, settings);
    vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(folder), name: path.basename(folder), index: 0 }];
    vscode.workspace.textDocuments = docs.map((d) => vscode.textDocument(vscode.Uri.file(d), 'latex', fs.readFileSync(d, 'utf8')));
    controller = new Controller(createClient);
    await controller.start();
    assert.strictEqual(controller.state, 'running', JSON.stringify(vscode.recorded.messages));
    return controller;
  }

  const messagesMatching = (re: RegExp) => vscode.recorded.messages.filter((m) => re.test(m.text));

  (real ? it : it.skip)('the index missing: one message naming the fix; the status bar says so and commands answer', async function () {
    this.timeout(120000);
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'peerlint-no-index-'));
    const c = await startReal(path.dirname(spec!.draft), [spec!.draft], { 'peerlint.indexPath': empty });
    await until('the status bar to say there is no index', 90000, () => c.statusItem.text === '$(warning) peerlint: no index');
    await until('the message about the index', 30000, () => vscode.recorded.messages.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 2000)); // nothing else may follow
    assert.strictEqual(vscode.recorded.messages.length, 1, JSON.stringify(vscode.recorded.messages));
    assert.ok(vscode.recorded.messages[0].text.includes(empty), vscode.recorded.messages[0].text);
    assert.match(vscode.recorded.messages[0].text, /^peerlint: .*peerlint index build/);
    const status = await vscode.commands.executeCommand('peerlint.showStatus') as { index: { ok: boolean; error: string } };
    assert.strictEqual(status.index.ok, false);
    assert.match(status.index.error, /peerlint index build/);
    assert.strictEqual(vscode.recorded.messages.length, 1, 'Show status answers in the output channel');
  });

  (real ? it : it.skip)('a lone .tex outside the workspace, a 5 MB .tex, no .bib: one message each, and commands answer', async function () {
    this.timeout(170000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'peerlint-bad-input-'));
    const ws = path.join(tmp, 'paper');
    fs.cpSync(path.dirname(spec!.draft), ws, { recursive: true });
    fs.rmSync(path.join(ws, 'refs.bib')); // draft.tex still says \bibliography{refs}
    const text = fs.readFileSync(spec!.draft, 'utf8');
    const close = text.split('\n\n').find((b) => b.includes('Predicting the rating of a textual review'))!;
    fs.mkdirSync(path.join(tmp, 'elsewhere'));
    const lone = path.join(tmp, 'elsewhere', 'notes.tex');
    fs.writeFileSync(lone, `${close.trim()}\n`);
    fs.mkdirSync(path.join(tmp, 'big'));
    const huge = path.join(tmp, 'big', 'huge.tex');
    const parts = ['\\documentclass{article}\n\\begin{document}\n'];
    for (let i = 0, size = 0; size < 5_000_000; i++) {
      parts.push(`In run ${i} we measured ${i * 7} samples. ${close}\n\n`);
      size += parts[parts.length - 1].length;
    }
    fs.writeFileSync(huge, parts.join('') + '\\end{document}\n');
    await startReal(ws, [path.join(ws, 'draft.tex'), lone, huge]);

    const codes = (file: string) =>
      ((vscode.diagnostics.get(vscode.Uri.file(file).toString()) ?? []) as vscode.Diagnostic[]).map((d) => JSON.stringify(d.code));
    await until('close-prior-work on the draft and on the lone file', 150000,
      () => [path.join(ws, 'draft.tex'), lone].every((f) => codes(f).some((c) => c.includes('close-prior-work'))));
    await until('the (empty) diagnostics of the 5 MB file', 30000, () => vscode.diagnostics.has(vscode.Uri.file(huge).toString()));
    await until('three messages', 30000, () => vscode.recorded.messages.length >= 3);
    await new Promise((resolve) => setTimeout(resolve, 2000)); // nothing else may follow
    assert.strictEqual(vscode.recorded.messages.length, 3, JSON.stringify(vscode.recorded.messages));
    assert.strictEqual(messagesMatching(/^peerlint: draft\.tex: bibliography file refs\.bib not found$/).length, 1);
    assert.strictEqual(messagesMatching(/^peerlint: notes\.tex has no \\documentclass and no root file includes it: checked on its own/).length, 1);
    assert.strictEqual(messagesMatching(/^peerlint: huge\.tex is 5\.\d MB, over the 1 MB peerlint checks in one file .* not checked/).length, 1);
    assert.deepStrictEqual(codes(huge), []);

    // still usable: Show related work on the lone file lists the paper it paraphrases
    const loneLine = close.slice(0, close.indexOf('Predicting the rating')).split('\n').length - 1;
    vscode.window.activeTextEditor = vscode.latexEditor(vscode.Uri.file(lone).toString(), loneLine + 1, 0);
    await vscode.commands.executeCommand('peerlint.showRelatedWork');
    const items = vscode.recorded.quickPicks[0]?.items as { label: string }[] | undefined;
    assert.strictEqual(items?.[0]?.label, 'Hierarchical Bi-Directional Self-Attention Networks for Paper Review Rating Recommendation');
    assert.strictEqual(vscode.recorded.messages.length, 3);
  });

  (real ? it : it.skip)('a server killed mid-session: restarted without a message, its diagnostics and commands back', async function () {
    this.timeout(170000);
    const c = await startReal(path.dirname(spec!.draft), [spec!.draft]);
    const draftUri = vscode.Uri.file(spec!.draft).toString();
    await until('diagnostics of the draft', 150000, () => (vscode.diagnostics.get(draftUri) ?? []).length > 0);
    const servers = () => execSync(`ps -o pid=,args= --ppid ${process.pid}`, { encoding: 'utf8' })
      .split('\n').filter((l) => l.includes('peerlint') && l.includes('serve')).map((l) => Number(l.trim().split(/\s+/)[0]));
    const [pid] = servers();
    assert.ok(pid, 'the server runs as a child of this process');
    vscode.diagnostics.clear();
    process.kill(pid, 'SIGKILL');
    await until('a new server process', 30000, () => servers().some((p) => p !== pid));
    await until('the diagnostics again', 150000, () => (vscode.diagnostics.get(draftUri) ?? []).length > 0);
    await until('the status bar to show the index again', 60000, () => /papers/.test(c.statusItem.text));
    assert.strictEqual(c.state, 'running');
    const status = await vscode.commands.executeCommand('peerlint.showStatus') as { index: { ok: boolean } } | undefined;
    assert.strictEqual(status?.index.ok, true);
    assert.deepStrictEqual(vscode.recorded.messages, [], 'a first crash is restarted quietly (the output channel says so)');
    assert.match((c.output as unknown as vscode.MockOutputChannel).lines.join('\n'), /restarting it \(1 of 3\)/);
  });

  (real ? it : it.skip)('talks to the real peerlint server: settings, diagnostics, commands', async function () {
    this.timeout(170000);
    const spec = JSON.parse(real!) as { command: string; args: string[]; indexPath: string; draft: string };
    const text = fs.readFileSync(spec.draft, 'utf8');
    const draftUri = vscode.Uri.file(spec.draft);
    vscode.userSettings['peerlint.server.command'] = spec.command;
    vscode.userSettings['peerlint.server.args'] = spec.args;
    vscode.userSettings['peerlint.indexPath'] = spec.indexPath;
    vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(path.dirname(spec.draft)), name: 'paper', index: 0 }];
    vscode.workspace.textDocuments = [vscode.textDocument(draftUri, 'latex', text)];

    controller = new Controller(createClient);
    await controller.start();
    assert.strictEqual(controller.state, 'running', JSON.stringify(vscode.recorded.messages));
    await until('the status bar to show the index', 120000, () => /papers/.test(controller!.statusItem.text));
    assert.match(controller.statusItem.text, /^\$\(book\) peerlint: [\d,]+ papers · auto$/);
    assert.strictEqual(controller.lastStatus?.index?.path, spec.indexPath);

    // diagnostics of the draft the client opened
    const closeDiag = () =>
      ((vscode.diagnostics.get(draftUri.toString()) ?? []) as vscode.Diagnostic[]).find((d) =>
        JSON.stringify(d.code).includes('close-prior-work'),
      );
    await until('a close-prior-work diagnostic', 150000, () => closeDiag() !== undefined);
    const line = text.slice(0, text.indexOf('Predicting the rating of a textual review')).split('\n').length - 1;
    assert.strictEqual(closeDiag()!.range.start.line, line);
    assert.strictEqual(closeDiag()!.severity, vscode.DiagnosticSeverity.Warning);

    // palette: Show related work -> QuickPick of the server's papers -> the picked one's link opens
    vscode.window.activeTextEditor = vscode.latexEditor(draftUri.toString(), line + 1, 0);
    await vscode.commands.executeCommand('peerlint.showRelatedWork');
    const items = vscode.recorded.quickPicks[0].items as { label: string; paper: { url: string } }[];
    assert.strictEqual(items[0].label, 'Hierarchical Bi-Directional Self-Attention Networks for Paper Review Rating Recommendation');
    assert.deepStrictEqual(vscode.recorded.opened, [items[0].paper.url]);

    // palette: Show status -> JSON in the output channel
    await vscode.commands.executeCommand('peerlint.showStatus');
    assert.ok((controller.output as unknown as vscode.MockOutputChannel).lines.some((l) => l.includes('"papers":')));

    // the server had nothing to say about the settings it got; a wrong type is reported by name
    assert.strictEqual(vscode.recorded.messages.length, 0, JSON.stringify(vscode.recorded.messages));
    await vscode.setSetting('peerlint.debounceMs', 'fast');
    await until('the server to report the bad setting', 30000, () => vscode.recorded.messages.length > 0);
    assert.match(vscode.recorded.messages[0].text, /debounceMs.*keeping 300/);
  });
});
