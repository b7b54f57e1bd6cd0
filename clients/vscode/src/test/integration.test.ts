// The extension's real LanguageClient (vscode-languageclient) over stdio, with only the `vscode`
// module mocked: a server that crashes on start, and — when tests/test_vscode_client.py passes
// PEERLINT_TEST_SERVER — the real peerlint server on the example draft.
import * as assert from 'assert';
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

  const real = process.env.PEERLINT_TEST_SERVER;
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
