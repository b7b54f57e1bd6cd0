// How the results of the server's commands are shown. Used both by the palette commands and
// when the server's own code actions (*Show related work*, *Check novelty*) run the command.
import * as vscode from 'vscode';

/** The argument every position-based server command takes (server/lsp.py: _where). */
export interface Where {
  uri: string;
  line: number;
  character: number;
  /** The end of a non-empty selection: `peerlint.checkNovelty` then checks exactly the selected idea. */
  end?: { line: number; character: number };
}

/** One paper of `peerlint.relatedWork` (retrieval/retriever.py: Hit.to_json). */
export interface RelatedPaper {
  id?: string;
  title: string;
  venue?: string | null;
  year?: number | null;
  similarity?: number;
  url?: string | null;
  authors?: string[];
}

/** `peerlint.checkNovelty`'s answer (server/service.py: Service.check_novelty). */
export interface NoveltyResult {
  ok: boolean;
  score?: number;
  message?: string;
  reason?: string | null;
}

/** A non-empty selection (start and end), else the cursor: the server finds the paragraph from there. */
export function whereOf(editor: vscode.TextEditor): Where {
  const sel = editor.selection;
  const pos = sel.isEmpty ? sel.active : sel.start;
  const where: Where = { uri: editor.document.uri.toString(), line: pos.line, character: pos.character };
  if (!sel.isEmpty) {
    where.end = { line: sel.end.line, character: sel.end.character };
  }
  return where;
}

export function isLatexEditor(editor: vscode.TextEditor | undefined): editor is vscode.TextEditor {
  return !!editor && ['latex', 'tex'].includes(editor.document.languageId);
}

export interface PaperItem extends vscode.QuickPickItem {
  paper: RelatedPaper;
}

export function paperItems(papers: RelatedPaper[]): PaperItem[] {
  return papers.map((p) => {
    const where = [p.venue, p.year].filter((x) => x !== undefined && x !== null && x !== '').join(' ');
    const sim = typeof p.similarity === 'number' ? `similarity ${p.similarity.toFixed(3)}` : '';
    return {
      label: p.title,
      description: where,
      detail: [sim, p.url || 'no link'].filter(Boolean).join(' · '),
      paper: p,
    };
  });
}

/** A QuickPick of the nearest papers; picking one opens its link. */
export async function presentRelated(result: unknown): Promise<RelatedPaper | undefined> {
  const papers = Array.isArray(result) ? (result as RelatedPaper[]) : [];
  if (papers.length === 0) {
    void vscode.window.showInformationMessage(
      'peerlint: no related work found here. Put the cursor in a paragraph of prose; if the index is empty, run "peerlint: Rebuild index".',
    );
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(paperItems(papers), {
    title: 'peerlint: nearest published papers',
    placeHolder: 'Pick a paper to open it',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) {
    return undefined;
  }
  if (picked.paper.url) {
    await vscode.env.openExternal(vscode.Uri.parse(picked.paper.url));
  } else {
    void vscode.window.showInformationMessage(`peerlint: "${picked.paper.title}" has no link in the index.`);
  }
  return picked.paper;
}

/** `peerlint.rankContributions`'s answer (server/service.py: Service.rank_contributions). */
export interface RankingResult {
  ok: boolean;
  message?: string;
  reason?: string | null;
}

/** The ranking goes to the output channel (one line per item); a short notice points there. */
export function presentRanking(result: unknown, output: vscode.OutputChannel): void {
  const r = (result ?? {}) as RankingResult;
  if (r.ok) {
    output.appendLine(r.message ?? 'contributions ranked');
    output.show(true);
    void vscode.window.showInformationMessage('peerlint: contributions ranked (see the peerlint output).');
  } else {
    void vscode.window.showWarningMessage(`peerlint: cannot rank contributions here: ${r.reason ?? 'unknown reason'}`);
  }
}

export function presentNovelty(result: unknown): void {
  const r = (result ?? {}) as NoveltyResult;
  if (r.ok) {
    void vscode.window.showInformationMessage(`peerlint: ${r.message ?? 'novelty checked'}`);
  } else {
    void vscode.window.showWarningMessage(`peerlint: cannot check novelty here: ${r.reason ?? 'unknown reason'}`);
  }
}

/** `peerlint.reindex`'s answer (index/build.py: BuildReport). */
export interface ReindexReport {
  papers?: number;
  chunks?: number;
  embedded?: number;
  seconds?: number;
}

export function reindexSummary(result: unknown): string {
  const r = (result ?? {}) as ReindexReport;
  if (typeof r.papers !== 'number') {
    return 'peerlint: index rebuilt.';
  }
  const secs = typeof r.seconds === 'number' ? ` in ${r.seconds.toFixed(0)} s` : '';
  return `peerlint: index rebuilt: ${r.papers} papers, ${r.chunks ?? '?'} chunks (${r.embedded ?? 0} newly embedded)${secs}.`;
}
