// A stand-in for the `vscode` module in unit tests (VS Code itself cannot be downloaded here).
// It records what the extension shows and answers like VS Code would: settings fall back to
// the defaults package.json contributes, messages resolve to a scripted answer.
import manifest from '../../package.json';

type Listener<T> = (e: T) => unknown;
type Props = Record<string, { default?: unknown }>;

export const recorded = {
  messages: [] as { level: 'error' | 'warning' | 'info'; text: string; items: string[] }[],
  quickPicks: [] as { items: unknown[]; options: unknown }[],
  opened: [] as string[],
  clipboard: [] as string[],
  executed: [] as { command: string; args: unknown[] }[],
  progress: [] as { options: { title?: string; cancellable?: boolean; location?: number }; source: CancellationTokenSource }[],
};

/** Scripted answers: the button clicked for the next message, the item picked in QuickPicks. */
export const answers = {
  message: undefined as string | undefined,
  quickPick: (items: unknown[]): unknown => items[0],
};

export const userSettings: Record<string, unknown> = {};
const registered = new Map<string, (...args: unknown[]) => unknown>();
const configListeners: Listener<ConfigurationChangeEvent>[] = [];

export function reset(): void {
  recorded.messages.length = 0;
  recorded.quickPicks.length = 0;
  recorded.opened.length = 0;
  recorded.clipboard.length = 0;
  recorded.executed.length = 0;
  recorded.progress.length = 0;
  answers.message = undefined;
  answers.quickPick = (items) => items[0];
  for (const k of Object.keys(userSettings)) {
    delete userSettings[k];
  }
  registered.clear();
  configListeners.length = 0;
  window.activeTextEditor = undefined;
}

/** The oldest VS Code the extension supports (package.json engines). */
export const version = '1.82.0';

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => this.listeners.splice(this.listeners.indexOf(listener), 1));
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) {
      l(e);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    private readonly value: string,
  ) {}
  static parse(value: string): Uri {
    return new Uri(value.split(':')[0], value);
  }
  static file(path: string): Uri {
    return new Uri('file', 'file://' + path.split('/').map(encodeURIComponent).join('/'));
  }
  get fsPath(): string {
    return decodeURIComponent(this.value.replace(/^file:\/\//, ''));
  }
  get path(): string {
    return this.fsPath;
  }
  toString(): string {
    return this.value;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(start: Position | number, end: Position | number, endLine?: number, endCharacter?: number) {
    if (typeof start === 'number' && typeof end === 'number') {
      this.start = new Position(start, end);
      this.end = new Position(endLine ?? start, endCharacter ?? end);
    } else {
      this.start = start as Position;
      this.end = end as Position;
    }
  }
}

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}

export class Diagnostic {
  code: unknown;
  source: string | undefined;
  constructor(
    readonly range: Range,
    readonly message: string,
    readonly severity: DiagnosticSeverity = DiagnosticSeverity.Error,
  ) {}
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export class CancellationTokenSource {
  private listeners: (() => unknown)[] = [];
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: (l: () => unknown): Disposable => {
      this.listeners.push(l);
      return new Disposable();
    },
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.listeners.forEach((l) => l());
    }
  }
  dispose(): void {}
}

export class CodeActionKind {
  static readonly Empty = new CodeActionKind('');
  static readonly QuickFix = new CodeActionKind('quickfix');
  static readonly Refactor = new CodeActionKind('refactor');
  static readonly RefactorExtract = new CodeActionKind('refactor.extract');
  static readonly RefactorInline = new CodeActionKind('refactor.inline');
  static readonly RefactorRewrite = new CodeActionKind('refactor.rewrite');
  static readonly Source = new CodeActionKind('source');
  static readonly SourceOrganizeImports = new CodeActionKind('source.organizeImports');
  constructor(readonly value: string) {}
  append(part: string): CodeActionKind {
    return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
  }
}

/** An open text document as the language client reads it. */
export function textDocument(uri: Uri, languageId: string, text: string, version = 1) {
  return {
    uri,
    languageId,
    version,
    fileName: uri.fsPath,
    isClosed: false,
    isUntitled: false,
    lineCount: text.split('\n').length,
    getText: () => text,
  };
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export class MockOutputChannel {
  lines: string[] = [];
  shown = 0;
  constructor(readonly name: string) {}
  append(s: string): void {
    this.lines.push(s);
  }
  appendLine(s: string): void {
    this.lines.push(s);
  }
  show(): void {
    this.shown++;
  }
  dispose(): void {}
}

export class MockStatusBarItem {
  text = '';
  tooltip: string | undefined;
  command: string | undefined;
  name: string | undefined;
  visible = false;
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {}
}

function message(level: 'error' | 'warning' | 'info') {
  return (text: string, ...items: string[]): Promise<string | undefined> => {
    recorded.messages.push({ level, text, items });
    const answer = answers.message;
    answers.message = undefined;
    return Promise.resolve(answer !== undefined && items.includes(answer) ? answer : undefined);
  };
}

export const window = {
  activeTextEditor: undefined as unknown,
  outputChannels: [] as MockOutputChannel[],
  statusItems: [] as MockStatusBarItem[],
  createOutputChannel(name: string): MockOutputChannel {
    const channel = new MockOutputChannel(name);
    window.outputChannels.push(channel);
    return channel;
  },
  createStatusBarItem(): MockStatusBarItem {
    const item = new MockStatusBarItem();
    window.statusItems.push(item);
    return item;
  },
  showErrorMessage: message('error'),
  showWarningMessage: message('warning'),
  showInformationMessage: message('info'),
  /** Runs the task at once; recorded.progress holds its options and the token source a test may cancel. */
  withProgress<R>(options: { title?: string; cancellable?: boolean; location?: number },
                  task: (progress: { report(v: unknown): void }, token: CancellationTokenSource['token']) => Promise<R>): Promise<R> {
    const source = new CancellationTokenSource();
    recorded.progress.push({ options, source });
    return task({ report: () => undefined }, source.token);
  },
  showQuickPick(items: unknown[], options: unknown): Promise<unknown> {
    recorded.quickPicks.push({ items, options });
    return Promise.resolve(answers.quickPick(items));
  },
};

export const commands = {
  registerCommand(id: string, fn: (...args: unknown[]) => unknown): Disposable {
    if (registered.has(id)) {
      throw new Error(`command '${id}' already exists`);
    }
    registered.set(id, fn);
    return new Disposable(() => registered.delete(id));
  },
  executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    recorded.executed.push({ command, args });
    const fn = registered.get(command);
    return Promise.resolve(fn ? fn(...args) : undefined);
  },
  registered(): string[] {
    return [...registered.keys()];
  },
};

const properties = manifest.contributes.configuration.properties as Props;

export interface ConfigurationChangeEvent {
  affectsConfiguration(section: string): boolean;
}

export const workspace = {
  workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
  textDocuments: [] as unknown[],
  getConfiguration(section?: string) {
    const prefix = section ? section + '.' : '';
    return {
      get<T>(key: string, fallback?: T): T | undefined {
        const full = prefix + key;
        if (full in userSettings) {
          return userSettings[full] as T;
        }
        if (full in properties) {
          return properties[full].default as T;
        }
        return fallback;
      },
      has(key: string): boolean {
        return prefix + key in userSettings || prefix + key in properties;
      },
    };
  },
  onDidChangeConfiguration(listener: Listener<ConfigurationChangeEvent>): Disposable {
    configListeners.push(listener);
    return new Disposable(() => configListeners.splice(configListeners.indexOf(listener), 1));
  },
};

/** Change a user setting and tell the listeners, as the Settings editor does. */
export async function setSetting(key: string, value: unknown): Promise<void> {
  userSettings[key] = value;
  const event = { affectsConfiguration: (s: string) => key === s || key.startsWith(s + '.') };
  await Promise.all(configListeners.map((l) => l(event)));
}

/** Diagnostics the client published, by URI (what the Problems panel would show). */
export const diagnostics = new Map<string, unknown[]>();

export const languages = {
  createDiagnosticCollection(name = 'peerlint') {
    return {
      name,
      set(uri: Uri, items: unknown[] | undefined) {
        diagnostics.set(uri.toString(), items ?? []);
      },
      delete(uri: Uri) {
        diagnostics.delete(uri.toString());
      },
      clear() {
        diagnostics.clear();
      },
      forEach() {},
      get(uri: Uri) {
        return diagnostics.get(uri.toString());
      },
      has(uri: Uri) {
        return diagnostics.has(uri.toString());
      },
      dispose() {},
    };
  },
  match(selector: { language?: string }[], document: { languageId: string }): number {
    return selector.some((s) => s.language === document.languageId) ? 10 : 0;
  },
};

export const env = {
  appName: 'Visual Studio Code (mock)',
  language: 'en',
  openExternal(uri: Uri): Promise<boolean> {
    recorded.opened.push(uri.toString());
    return Promise.resolve(true);
  },
  clipboard: {
    writeText(text: string): Promise<void> {
      recorded.clipboard.push(text);
      return Promise.resolve();
    },
  },
};

/** A LaTeX editor with the cursor (or a selection) at the given place. */
export function latexEditor(uri: string, line: number, character: number, languageId = 'latex', end?: [number, number]) {
  const start = { line, character };
  const stop = end ? { line: end[0], character: end[1] } : start;
  return {
    document: { uri: Uri.parse(uri), languageId },
    selection: { start, end: stop, active: stop, anchor: start, isEmpty: !end },
  };
}
