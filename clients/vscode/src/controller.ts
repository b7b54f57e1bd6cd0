// The extension's behaviour, apart from vscode-languageclient: starting and restarting the
// server, the palette commands, the status bar and settings changes. extension.ts plugs a real
// LanguageClient in through `ClientFactory`; the unit tests plug in a fake one.
import * as vscode from 'vscode';
import {
  isLatexEditor,
  presentNovelty,
  presentRanking,
  presentRelated,
  reindexSummary,
  whereOf,
} from './commands';
import { CloseDecision, RestartPolicy } from './restart';
import {
  ConfigLike,
  SECTION,
  ServerCommand,
  findExecutable,
  missingServerMessage,
  INSTALL_COMMAND,
  serverCommand,
  serverSettings,
} from './settings';
import { ProgressTracker, ProgressValue, ServerStatus, statusView } from './status';

/** The part of a vscode-languageclient `LanguageClient` the controller uses. */
export interface ServerClient {
  start(): Promise<void>;
  stop(): Promise<void>;
  isRunning(): boolean;
  sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R>;
  sendNotification(method: string, params: unknown): Promise<void>;
  /** Kill the server process at once: one that never answered `initialize` cannot be shut down over LSP. */
  abandon(): void;
}

/** What the client built by a `ClientFactory` calls back into. */
export interface ClientHooks {
  /** The connection closed although nobody stopped it: restart or give up. */
  onClosed(): CloseDecision;
  /** `$/progress` from the server (LLM checks, novelty, reindex). */
  onProgress(token: string | number, value: ProgressValue): void;
  /** A server command ran from a code action; show its result as the palette command would. */
  onCommandResult(command: string, result: unknown): void;
  /** The answer to `workspace/configuration` for section "peerlint". */
  configuration(): Record<string, unknown>;
}

export interface ClientSpec {
  /** Resolved command (absolute path) and arguments. */
  server: ServerCommand;
  initializationOptions: Record<string, unknown>;
  outputChannel: vscode.OutputChannel;
  hooks: ClientHooks;
}

export type ClientFactory = (spec: ClientSpec) => ServerClient;

export type ServerState = 'stopped' | 'starting' | 'running' | 'not-found' | 'failed' | 'gave-up';

/** Palette command id -> server command it runs (ids differ: the client registers the server's own). */
export const PALETTE_COMMANDS = {
  'peerlint.checkNoveltyOfSelection': 'peerlint.checkNovelty',
  'peerlint.showRelatedWork': 'peerlint.relatedWork',
  'peerlint.rankContributionsAtCursor': 'peerlint.rankContributions',
  'peerlint.rebuildIndex': 'peerlint.reindex',
  'peerlint.showStatus': 'peerlint.status',
} as const;

const STATUS_POLL_MS = 2000;
const STATUS_POLLS = 90;

export class Controller implements vscode.Disposable {
  readonly output: vscode.OutputChannel;
  readonly statusItem: vscode.StatusBarItem;
  readonly progress = new ProgressTracker();
  readonly restarts = new RestartPolicy();
  client: ServerClient | undefined;
  state: ServerState = 'stopped';
  lastStatus: ServerStatus | undefined;
  private statusText = '$(book) peerlint';
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private closedDuringStart = false;
  private serverDescription = '';
  private disposables: vscode.Disposable[] = [];

  constructor(
    private readonly makeClient: ClientFactory,
    private readonly restartDelayMs = 1000,
    /** How long the server may take to answer `initialize` (it loads its index only afterwards). */
    private readonly startTimeoutMs = 60000,
  ) {
    this.output = vscode.window.createOutputChannel('peerlint');
    this.statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
    this.statusItem.command = 'peerlint.showStatus';
    this.statusItem.name = 'peerlint';
    this.setStatus('$(book) peerlint', 'peerlint language server');
    this.statusItem.show();
    this.disposables.push(
      this.output,
      this.statusItem,
      vscode.commands.registerCommand('peerlint.checkNoveltyOfSelection', () => this.checkNovelty()),
      vscode.commands.registerCommand('peerlint.showRelatedWork', () => this.showRelatedWork()),
      vscode.commands.registerCommand('peerlint.rankContributionsAtCursor', () => this.rankContributions()),
      vscode.commands.registerCommand('peerlint.rebuildIndex', () => this.rebuildIndex()),
      vscode.commands.registerCommand('peerlint.showStatus', () => this.showStatus()),
      vscode.commands.registerCommand('peerlint.restartServer', () => this.restart()),
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
    );
  }

  private config(): ConfigLike {
    return vscode.workspace.getConfiguration(SECTION);
  }

  // -- lifecycle ---------------------------------------------------------------------------
  async start(): Promise<void> {
    if (this.client) {
      return;
    }
    const wanted = serverCommand(this.config());
    const resolved = findExecutable(wanted.command);
    if (!resolved) {
      this.state = 'not-found';
      this.setStatus('$(error) peerlint: server not found', missingServerMessage(wanted.command));
      this.output.appendLine(missingServerMessage(wanted.command));
      void this.showMissingServer(wanted.command);
      return;
    }
    this.state = 'starting';
    this.setStatus('$(sync~spin) peerlint: starting', `${resolved} ${wanted.args.join(' ')}`);
    const client = this.makeClient({
      server: { command: resolved, args: wanted.args },
      initializationOptions: serverSettings(this.config()),
      outputChannel: this.output,
      hooks: {
        onClosed: () => (this.client === client ? this.onClosed() : { restart: false, message: 'peerlint: the language server was stopped.' }),
        onProgress: (token, value) => this.onProgress(token, value),
        onCommandResult: (command, result) => this.onCommandResult(command, result),
        configuration: () => serverSettings(this.config()),
      },
    });
    this.client = client;
    this.serverDescription = `${resolved} ${wanted.args.join(' ')}`;
    await this.launch(client);
  }

  /** Start (or, after a crash, start again) `client`; failures are reported once, here or by onClosed. */
  private async launch(client: ServerClient): Promise<void> {
    this.closedDuringStart = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    try {
      // A command that runs but never speaks LSP (a Python interpreter without `-m peerlint serve`
      // reads a script from stdin until it closes) would leave the client starting forever.
      await Promise.race([
        client.start(),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => {
            timedOut = true;
            reject(new Error(
            `it did not answer within ${Math.round(this.startTimeoutMs / 1000)} s; is '${this.serverDescription}' the peerlint server ` +
            "(the command 'peerlint' with the arguments [\"serve\"], or a Python with [\"-m\", \"peerlint\", \"serve\"])?"));
          }, this.startTimeoutMs);
        }),
      ]);
    } catch (err) {
      if (timedOut && this.client === client) {
        this.client = undefined; // first, so that its closing is not taken for a crash to restart
        client.abandon();
      }
      const message = `peerlint: the language server (${this.serverDescription}) failed to start: ${errorText(err)}. See the 'peerlint' output channel.`;
      this.output.appendLine(message);
      if (!timedOut && (this.closedDuringStart || this.client !== client)) {
        return; // the server died while starting: onClosed restarts it or gives up, and says so
      }
      this.client = undefined;
      this.state = 'failed';
      this.setStatus('$(error) peerlint: failed to start', message);
      void vscode.window.showErrorMessage(message, 'Show log').then((a) => a && this.output.show());
      return;
    } finally {
      clearTimeout(timer);
    }
    if (this.client === client) {
      this.state = 'running';
      void this.refreshStatus();
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.progress.clear();
    this.stopPolling();
    if (client) {
      try {
        await client.stop();
      } catch (err) {
        this.output.appendLine(`peerlint: stopping the server failed: ${errorText(err)}`);
      }
    }
    this.state = 'stopped';
  }

  async restart(): Promise<void> {
    await this.stop();
    this.restarts.reset();
    await this.start();
  }

  private onClosed(): CloseDecision {
    const decision = this.restarts.onClosed();
    this.closedDuringStart = true;
    this.output.appendLine(decision.message);
    this.progress.clear();
    if (decision.restart) {
      this.state = 'starting';
      this.setStatus('$(sync~spin) peerlint: restarting', decision.message);
      const client = this.client;
      setTimeout(() => {
        if (client && this.client === client) {
          void this.launch(client);
        }
      }, this.restartDelayMs);
    } else {
      this.state = 'gave-up';
      this.client = undefined;
      this.stopPolling();
      this.setStatus('$(error) peerlint: stopped', decision.message);
      void vscode.window.showErrorMessage(decision.message, 'Show log', 'Restart server').then((a) => {
        if (a === 'Show log') {
          this.output.show();
        } else if (a === 'Restart server') {
          void this.restart();
        }
      });
    }
    return decision;
  }

  private async showMissingServer(command: string): Promise<void> {
    const action = await vscode.window.showErrorMessage(
      missingServerMessage(command),
      'Copy install command',
      'Open settings',
    );
    if (action === 'Copy install command') {
      await vscode.env.clipboard.writeText(INSTALL_COMMAND);
    } else if (action === 'Open settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'peerlint.server');
    }
  }

  private async onConfigurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration(SECTION)) {
      return;
    }
    if (e.affectsConfiguration(`${SECTION}.server`)) {
      this.output.appendLine('peerlint: server command changed; restarting the server');
      await this.restart();
      return;
    }
    if (this.client && this.client.isRunning()) {
      await this.client.sendNotification('workspace/didChangeConfiguration', {
        settings: { [SECTION]: serverSettings(this.config()) },
      });
      void this.refreshStatus();
    }
  }

  // -- talking to the server ---------------------------------------------------------------
  /** Run a server command; undefined (after telling the user why) when it cannot run. */
  async executeServer<R>(command: string, args: unknown[] = [], token?: vscode.CancellationToken): Promise<R | undefined> {
    if (!this.client || !this.client.isRunning()) {
      const why =
        this.state === 'not-found'
          ? missingServerMessage(serverCommand(this.config()).command)
          : this.state === 'starting'
            ? 'peerlint: the language server is still starting; try again in a moment.'
            : "peerlint: the language server is not running. Run 'peerlint: Restart server'; its log is in the 'peerlint' output channel.";
      void vscode.window.showWarningMessage(why);
      return undefined;
    }
    try {
      // No `undefined` token argument: vscode-jsonrpc would send it as a second parameter.
      const params = { command, arguments: args };
      return await (token
        ? this.client.sendRequest<R>('workspace/executeCommand', params, token)
        : this.client.sendRequest<R>('workspace/executeCommand', params));
    } catch (err) {
      if (token?.isCancellationRequested) {
        return undefined;
      }
      void vscode.window.showErrorMessage(`peerlint: ${command} failed: ${errorText(err)}`);
      return undefined;
    }
  }

  private activeWhere() {
    const editor = vscode.window.activeTextEditor;
    if (!isLatexEditor(editor)) {
      void vscode.window.showWarningMessage('peerlint: open a LaTeX file and put the cursor in a paragraph first.');
      return undefined;
    }
    return whereOf(editor);
  }

  /** Run a palette command on the paragraph, selection or list at the cursor and present its answer.
   * With a `title` it runs under a notification with a Cancel button: an LLM check can take a minute
   * on a CPU, and cancelling frees the editor at once (the request is cancelled; a late answer is dropped). */
  private async atCursor(palette: keyof typeof PALETTE_COMMANDS, title: string | undefined,
                         present: (result: unknown) => unknown): Promise<unknown> {
    const where = this.activeWhere();
    if (!where) {
      return undefined;
    }
    const result = title === undefined ? await this.executeServer(PALETTE_COMMANDS[palette], [where]) : await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      (_progress, token) => new Promise<unknown>((resolve) => {
        token.onCancellationRequested(() => {
          void vscode.window.showInformationMessage(`${title}: cancelled.`);
          resolve(undefined);
        });
        this.executeServer(PALETTE_COMMANDS[palette], [where], token).then(
          (answer) => resolve(token.isCancellationRequested ? undefined : answer),
          () => resolve(undefined),
        );
      }),
    );
    if (result !== undefined) {
      await present(result);
    }
    return result;
  }

  checkNovelty(): Promise<unknown> {
    return this.atCursor('peerlint.checkNoveltyOfSelection', 'peerlint: checking novelty', presentNovelty);
  }

  rankContributions(): Promise<unknown> {
    return this.atCursor('peerlint.rankContributionsAtCursor', 'peerlint: ranking contributions', (result) => presentRanking(result, this.output));
  }

  showRelatedWork(): Promise<unknown> {
    return this.atCursor('peerlint.showRelatedWork', undefined, presentRelated);
  }

  async rebuildIndex(): Promise<unknown> {
    this.setStatus('$(sync~spin) peerlint: rebuilding the index', 'peerlint.reindex is running');
    const result = await this.executeServer(PALETTE_COMMANDS['peerlint.rebuildIndex'], []);
    if (result !== undefined) {
      void vscode.window.showInformationMessage(reindexSummary(result));
    }
    void this.refreshStatus();
    return result;
  }

  async showStatus(): Promise<ServerStatus | undefined> {
    const status = await this.executeServer<ServerStatus>(PALETTE_COMMANDS['peerlint.showStatus'], []);
    if (status !== undefined) {
      this.applyStatus(status);
      this.output.appendLine(`peerlint status:\n${JSON.stringify(status, null, 2)}`);
      this.output.show(true);
    }
    return status;
  }

  /** Ask the server for its state and show it; poll while it starts or loads its index. */
  async refreshStatus(poll = 0): Promise<void> {
    const client = this.client;
    if (!client) {
      return;
    }
    if (!client.isRunning()) {
      this.schedulePoll(poll);
      return;
    }
    let status: ServerStatus;
    try {
      status = await client.sendRequest<ServerStatus>('workspace/executeCommand', { command: 'peerlint.status', arguments: [] });
    } catch {
      return;
    }
    if (this.state === 'starting') {
      this.state = 'running';
    }
    this.applyStatus(status);
    this.stopPolling();
    if (!status.index?.ok && !status.index?.error) {
      this.schedulePoll(poll);
    }
  }

  private schedulePoll(poll: number): void {
    this.stopPolling();
    if (poll < STATUS_POLLS) {
      this.pollTimer = setTimeout(() => void this.refreshStatus(poll + 1), STATUS_POLL_MS);
    }
  }

  private stopPolling(): void {
    if (this.pollTimer) {
      clearTimeout(this.pollTimer);
      this.pollTimer = undefined;
    }
  }

  private applyStatus(status: ServerStatus): void {
    this.lastStatus = status;
    if (!status.index?.ok && !status.index?.error) {
      this.setStatus('$(sync~spin) peerlint: loading the index', 'The server is loading its index and embedding model.');
      return;
    }
    const view = statusView(status);
    this.setStatus(view.text, view.tooltip);
  }

  private setStatus(text: string, tooltip: string): void {
    this.statusText = text;
    this.statusItem.text = this.progress.text() ?? text;
    this.statusItem.tooltip = tooltip;
  }

  private onProgress(token: string | number, value: ProgressValue): void {
    const finished = this.progress.update(token, value);
    this.statusItem.text = this.progress.text() ?? this.statusText;
    if (finished) {
      void this.refreshStatus();
    }
  }

  private onCommandResult(command: string, result: unknown): void {
    if (command === 'peerlint.relatedWork') {
      void presentRelated(result);
    } else if (command === 'peerlint.checkNovelty') {
      presentNovelty(result);
    } else if (command === 'peerlint.reindex') {
      void vscode.window.showInformationMessage(reindexSummary(result));
      void this.refreshStatus();
    }
  }

  dispose(): void {
    this.stopPolling();
    for (const d of this.disposables) {
      d.dispose();
    }
    this.disposables = [];
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    return err.message;
  }
  return typeof err === 'string' ? err : JSON.stringify(err);
}
