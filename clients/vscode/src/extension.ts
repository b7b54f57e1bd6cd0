// Entry point: plugs vscode-languageclient into the Controller (which holds the behaviour).
import type { ChildProcess } from 'child_process';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import { ClientSpec, Controller } from './controller';
import { SECTION } from './settings';
import { ProgressValue } from './status';

let controller: Controller | undefined;

/** Documents the server analyses: LaTeX files on disk (it reads the project around them). */
export const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'latex' },
  { scheme: 'file', language: 'tex' },
];

export function createClient(spec: ClientSpec): PeerlintLanguageClient {
  const { hooks } = spec;
  // No `transport`: with TransportKind.stdio the client would append `--stdio` to the arguments,
  // which `peerlint serve` rejects; without one it talks over the process's stdin/stdout all the same.
  const serverOptions: ServerOptions = {
    command: spec.server.command,
    args: spec.server.args,
    options: { env: { ...process.env, PYTHONUNBUFFERED: '1' } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: spec.initializationOptions,
    outputChannel: spec.outputChannel,
    errorHandler: {
      error: (_error, _message, count) => ({ action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown }),
      // The controller restarts the server itself (at most 3 times in 3 minutes) and tells the user;
      // the client's own restart would race with its clean-up of the failed start.
      closed: () => ({ action: CloseAction.DoNotRestart, message: hooks.onClosed().message, handled: true }),
    },
    // A server that dies while initializing is handled by `closed`; without this the client
    // would also show "Pending response rejected since connection got disposed".
    initializationFailedHandler: () => false,
    middleware: {
      workspace: {
        // Answer `workspace/configuration` for "peerlint" with the server's settings only
        // (the whole section would also carry the client's own `server.*` and `trace.*` keys).
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) {
            return answers;
          }
          return answers.map((answer, i) => (params.items[i]?.section === SECTION ? hooks.configuration() : answer));
        },
      },
      executeCommand: async (command, args, next) => {
        const result = await next(command, args);
        hooks.onCommandResult(command, result);
        return result;
      },
      handleWorkDoneProgress: (token, params, next) => {
        hooks.onProgress(token, params as ProgressValue);
        next(token, params);
      },
    },
  };
  return new PeerlintLanguageClient(SECTION, 'peerlint', serverOptions, clientOptions);
}

/** The controller says once why the server is not running; the client's notifications for the
 * same failure would repeat it (they still go to the output channel). */
const REPORTED_BY_CONTROLLER = /couldn't create connection to server|Restarting server failed|Server initialization failed|Connection to server got closed/;

export class PeerlintLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    super.error(message, data, REPORTED_BY_CONTROLLER.test(message) ? false : showNotification);
  }

  /** `stop()` refuses a client still starting, so the process is killed directly (the node client
   * keeps it in `_serverProcess`, vscode-languageclient 9). */
  abandon(): void {
    (this as unknown as { _serverProcess?: ChildProcess })._serverProcess?.kill();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  controller = new Controller(createClient);
  context.subscriptions.push(controller);
  await controller.start();
}

export async function deactivate(): Promise<void> {
  if (controller) {
    await controller.stop();
    controller = undefined;
  }
}
