// What the extension sends to the server, read from the `peerlint.*` settings.
//
// package.json is the one list of settings: every `peerlint.X` it contributes, except the
// client's own keys below, is a server setting named `X` (camelCase, as server/config.py
// accepts them). Nothing here knows the server's defaults: VS Code fills them in from
// package.json, and the server validates every value and reports bad ones itself.
import * as path from 'path';
import * as fs from 'fs';
import manifest from '../package.json';

export const SECTION = 'peerlint';

/** Settings of the extension itself (how to start the server), never sent to it. */
export const CLIENT_KEYS: readonly string[] = ['server.command', 'server.args', 'trace.server'];

const contributed = Object.keys(manifest.contributes.configuration.properties)
  .filter((k) => k.startsWith(SECTION + '.'))
  .map((k) => k.slice(SECTION.length + 1));

/** Server settings, in the order package.json lists them. */
export const SERVER_KEYS: readonly string[] = contributed.filter((k) => !CLIENT_KEYS.includes(k));

/** The part of `vscode.WorkspaceConfiguration` this module reads. */
export interface ConfigLike {
  get<T>(key: string, defaultValue?: T): T | undefined;
}

/** `{indexPath, backend, …}`: the server's settings as initializationOptions and configuration answers. */
export function serverSettings(config: ConfigLike): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const value = config.get<unknown>(key);
    if (value !== undefined) {
      out[key] = toPlain(value);
    }
  }
  return out;
}

/** VS Code hands out frozen proxies for objects; the protocol wants plain JSON. */
function toPlain(value: unknown): unknown {
  return value === null || typeof value !== 'object' ? value : JSON.parse(JSON.stringify(value));
}

export interface ServerCommand {
  command: string;
  args: string[];
}

export function serverCommand(config: ConfigLike): ServerCommand {
  const command = (config.get<string>('server.command') || 'peerlint').trim();
  const raw = config.get<unknown>('server.args');
  const args = Array.isArray(raw) ? raw.map(String) : ['serve'];
  return { command: expandHome(command), args };
}

function expandHome(p: string): string {
  const home = process.env.HOME || process.env.USERPROFILE;
  return home && (p === '~' || p.startsWith('~/')) ? path.join(home, p.slice(1)) : p;
}

/**
 * Where `command` would be found, or undefined when it would not: a path is checked as it is,
 * a bare name is looked up on PATH (with PATHEXT on Windows), like the shell would.
 */
export function findExecutable(
  command: string,
  env: NodeJS.ProcessEnv = process.env,
  isFile: (p: string) => boolean = isExecutableFile,
): string | undefined {
  if (!command) {
    return undefined;
  }
  if (command.includes('/') || command.includes('\\')) {
    return isFile(command) ? command : undefined;
  }
  const exts = process.platform === 'win32' ? (env.PATHEXT || '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const ext of exts) {
      const candidate = path.join(dir, command + ext);
      if (isFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

function isExecutableFile(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

export const INSTALL_COMMAND = 'pip install peerlint';

/** The one message shown when the server cannot be started because its command is missing. */
export function missingServerMessage(command: string): string {
  return (
    `peerlint: the language server command "${command}" was not found. ` +
    `Install it with \`${INSTALL_COMMAND}\` (or \`make install\` in a peerlint checkout), ` +
    'then set "peerlint.server.command" to the full path of the peerlint executable ' +
    '(e.g. /path/to/peerlint/.venv/bin/peerlint) if it is not on your PATH.'
  );
}
