// The status-bar text: index and backend state from `peerlint.status`, LLM work from `$/progress`.

/** The JSON `peerlint.status` returns (server/service.py: Service.status). */
export interface ServerStatus {
  index?: { path?: string; ok?: boolean; error?: string | null; papers?: number };
  llm?: { backend?: string | null; model?: string | null; error?: string | null; configured?: string };
  analyzed?: Record<string, number>;
  embedded?: number;
  projects?: string[];
  analyzers?: string[];
}

export interface StatusView {
  text: string;
  tooltip: string;
}

export function statusView(status: ServerStatus): StatusView {
  const index = status.index ?? {};
  const llm = status.llm ?? {};
  const backend = llm.backend || llm.configured || 'auto';
  const model = llm.model ? ` (${llm.model})` : '';
  const lines = [
    index.ok
      ? `Index: ${(index.papers ?? 0).toLocaleString('en-US')} papers in ${index.path ?? '?'}`
      : `Index: not available — ${index.error ?? 'unknown error'}`,
    `LLM backend: ${backend}${model}${llm.error ? ` — ${llm.error}` : ''}`,
    `Analyzers: ${(status.analyzers ?? []).join(', ') || 'none'}`,
    'Click for the full status.',
  ];
  const text = index.ok
    ? `$(book) peerlint: ${(index.papers ?? 0).toLocaleString('en-US')} papers · ${backend}`
    : '$(warning) peerlint: no index';
  return { text: llm.error && index.ok ? `${text} $(warning)` : text, tooltip: lines.join('\n') };
}

export type ProgressValue =
  | { kind: 'begin'; title: string; message?: string; percentage?: number }
  | { kind: 'report'; message?: string; percentage?: number }
  | { kind: 'end'; message?: string };

/** Work the server reports with `$/progress` (LLM checks, novelty, index rebuilds), newest last. */
export class ProgressTracker {
  private active = new Map<string, { title: string; message?: string; percentage?: number }>();

  /** Returns true when the last piece of work just ended (time to refresh the status). */
  update(token: string | number, value: ProgressValue): boolean {
    const key = String(token);
    if (value.kind === 'begin') {
      this.active.set(key, { title: value.title, message: value.message, percentage: value.percentage });
    } else if (value.kind === 'report') {
      const item = this.active.get(key);
      if (item) {
        item.message = value.message ?? item.message;
        item.percentage = value.percentage ?? item.percentage;
      }
    } else {
      this.active.delete(key);
      return this.active.size === 0;
    }
    return false;
  }

  /** The status-bar text while work is running, or undefined when none is. */
  text(): string | undefined {
    const items = [...this.active.values()];
    const item = items[items.length - 1];
    if (!item) {
      return undefined;
    }
    const title = item.title.replace(/^peerlint:\s*/, '');
    const pct = item.percentage !== undefined ? ` ${Math.round(item.percentage)}%` : '';
    const more = items.length > 1 ? ` (+${items.length - 1})` : '';
    return `$(sync~spin) peerlint: ${title}${pct}${more}`;
  }

  clear(): void {
    this.active.clear();
  }
}
