import * as assert from 'assert';
import * as path from 'path';
import * as vscode from './vscode-mock';

// The bundled out/extension.js (what the .vsix ships) activates on the mock: commands are
// registered, and a missing server gives the one install message.
describe('bundle: out/extension.js', () => {
  const bundle = path.resolve(__dirname, '..', '..', '..', 'out', 'extension.js');

  it('activates, registers the palette commands and explains a missing server', async () => {
    vscode.reset();
    vscode.userSettings['peerlint.server.command'] = '/nonexistent/bin/peerlint';
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ext = require(bundle) as { activate(c: unknown): Promise<void>; deactivate(): Promise<void> };
    const context = { subscriptions: [] as { dispose(): void }[] };
    await ext.activate(context);
    assert.ok(vscode.commands.registered().includes('peerlint.showRelatedWork'));
    assert.strictEqual(vscode.recorded.messages.length, 1);
    assert.match(vscode.recorded.messages[0].text, /"\/nonexistent\/bin\/peerlint" was not found.*pip install peerlint/);
    await ext.deactivate();
    context.subscriptions.forEach((d) => d.dispose());
    assert.deepStrictEqual(vscode.commands.registered(), []);
  });
});
