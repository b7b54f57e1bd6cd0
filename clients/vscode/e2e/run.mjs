// The extension in a real VS Code: code-server on loopback, driven by Debian's chromium through
// puppeteer-core, on a copy of examples/. Each step is what a user does, and each leaves a
// screenshot under results/e2e/; the run ends with a JSON report there (timings, what was seen).
//
//   node e2e/run.mjs [--cache DIR] [--index DIR] [--out DIR] [--keep]
//
// install.sh puts code-server and puppeteer-core into the cache; this script never downloads.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EXT = path.dirname(HERE);
const REPO = path.resolve(EXT, '..', '..');

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}
const CACHE = path.resolve(option('--cache', process.env.PEERLINT_E2E_CACHE || path.join(os.homedir(), '.cache', 'peerlint-e2e')));
const INDEX = path.resolve(option('--index', path.join(CACHE, 'index')));
const OUT = path.resolve(option('--out', path.join(REPO, 'results', 'e2e')));
const KEEP = process.argv.includes('--keep');
const SERVER = path.join(REPO, '.venv', 'bin', 'peerlint');
const VSIX = path.join(EXT, 'peerlint.vsix');
const CODE_SERVER = path.join(CACHE, 'node_modules', '.bin', 'code-server');
const CHROMIUM = process.env.PEERLINT_E2E_CHROMIUM || '/usr/bin/chromium';

const require = createRequire(path.join(CACHE, 'package.json'));
const puppeteer = require('puppeteer-core');

const report = { started: new Date().toISOString(), steps: [], timings: {}, seen: {} };
const t0 = Date.now();
function log(msg) {
  console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
}

class StepError extends Error {}

/** Polls `fn` until it returns a truthy value; the message says what never appeared. */
async function until(what, fn, timeoutMs = 30000, everyMs = 100) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) {
        return last;
      }
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new StepError(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last instanceof Error ? ` (${last.message})` : ''}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(out) : reject(new StepError(`${cmd} ${args.join(' ')} exited ${code}: ${(out + err).slice(-2000)}`))));
  });
}

/** A throwaway home for code-server: user data, extensions, the workspace copy, the server log. */
function prepare(tmp) {
  const ws = path.join(tmp, 'paper');
  fs.cpSync(path.join(REPO, 'examples'), ws, { recursive: true });
  const user = path.join(tmp, 'user-data', 'User');
  fs.mkdirSync(user, { recursive: true });
  const settings = {
    'peerlint.server.command': SERVER,
    'peerlint.server.args': ['serve'],
    'peerlint.indexPath': INDEX,
    'peerlint.logFile': path.join(tmp, 'server.log'),
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'update.mode': 'none',
    'editor.minimap.enabled': false,
    'editor.hover.delay': 300,
    'editor.wordWrap': 'on',
    'files.autoSave': 'off',
    'git.enabled': false,
    'chat.commandCenter.enabled': false,
    'window.commandCenter': false,
  };
  fs.writeFileSync(path.join(user, 'settings.json'), JSON.stringify(settings, null, 2));
  return { ws, userData: path.join(tmp, 'user-data'), extensions: path.join(tmp, 'extensions'), settingsFile: path.join(user, 'settings.json') };
}

async function startCodeServer(dirs, tmp) {
  const port = await freePort();
  const common = ['--config', path.join(tmp, 'config.yaml'), '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];
  await run(CODE_SERVER, [...common, '--install-extension', VSIX]);
  const env = peerlintEnv(path.join(tmp, 'peerlint-cache'));
  const proc = spawn(
    CODE_SERVER,
    [...common, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override', '--ignore-last-opened', dirs.ws],
    { stdio: ['ignore', 'pipe', 'pipe'], env, detached: true },
  );
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  await until('code-server to listen', () => out.includes('HTTP server listening') || proc.exitCode !== null, 60000);
  if (proc.exitCode !== null) {
    throw new StepError(`code-server exited ${proc.exitCode}: ${out.slice(-2000)}`);
  }
  return { proc, port, output: () => out };
}

/** The Problems panel's rows as text (what a user reads there), e.g. "Line 158: warning close-prior-work ...". */
async function problems(page) {
  return page.$$eval('.markers-panel .monaco-list-row', (rows) => rows.map((r) => `${r.getAttribute('aria-label') || ''} ${r.textContent || ''}`));
}

/** "close-prior-work@158" from a Problems row ("... peerlint(close-prior-work) [Ln 158, Col 1]"). */
function problemKey(row) {
  const codes = [...row.matchAll(/peerlint\(?([a-z]+(?:-[a-z]+)*)\)?/g)];
  const line = row.match(/at line (\d+) and character \d+/);
  return codes.length && line ? `${codes[codes.length - 1][1]}@${line[1]}` : undefined;
}

/** The models `make install` leaves in the user's peerlint cache (the exported query model, the verified
 * judge): peerlint.locations.cache_root's folder, if it holds them. */
function installedModels() {
  const root = process.env.PEERLINT_CACHE_DIR
    || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'peerlint');
  const models = path.join(root, 'models');
  return fs.existsSync(models) ? models : null;
}

/** The venue style `peerlint index build` learnt for INDEX's live build, in the user's cache: the files. */
function builtVenueStyle(models) {
  let build;
  try {
    build = fs.readFileSync(path.join(INDEX, 'CURRENT'), 'utf8').trim();
  } catch {
    return [];
  }
  const drafts = path.join(path.dirname(models), 'drafts');
  return [`venue-head-${build}.npz`, `venue-calibration-${build}.npz`]
    .map((name) => path.join(drafts, name)).filter((file) => fs.existsSync(file));
}

/** The environment peerlint runs in here: offline, with `cache` as its cache — empty but for the
 * installed models and the index build's venue style, as on a user's machine after `make install` and
 * `peerlint index build` (a server whose cache lacks them exports the query model first, ~6 s once:
 * `peerlint bench lsp --cold` measures both). */
function peerlintEnv(cache) {
  const models = installedModels();
  if (models && !fs.existsSync(path.join(cache, 'models'))) {
    fs.mkdirSync(path.join(cache, 'drafts'), { recursive: true });
    fs.symlinkSync(models, path.join(cache, 'models'), 'dir');
    for (const file of builtVenueStyle(models)) fs.symlinkSync(file, path.join(cache, 'drafts', path.basename(file)));
  }
  report.setup = { ...(report.setup || {}), installed_models: models };
  return { ...process.env, HF_HUB_OFFLINE: '1', TOKENIZERS_PARALLELISM: 'false', PEERLINT_CACHE_DIR: cache };
}

/** What the CLI finds in the same copy with the same index: the editor must show exactly these. */
async function expectedFindings(ws, tmp) {
  const settings = path.join(tmp, 'check-settings.json');
  fs.writeFileSync(settings, JSON.stringify({ indexPath: INDEX }));
  // A cache as fresh as the server's (startCodeServer), but its own: the same embedding route, and the
  // server's first run stays cold.
  const out = await run(SERVER, ['check', path.join(ws, 'draft.tex'), '--settings', settings, '--json'],
    { cwd: ws, env: peerlintEnv(path.join(tmp, 'check-cache')) });
  const found = JSON.parse(out).filter((f) => f.code && path.basename(f.file || '') === 'draft.tex');
  if (!found.some((f) => f.code === 'close-prior-work' && f.line === 158)) {
    throw new StepError(`peerlint check no longer finds close-prior-work on draft.tex:158, which this run hovers and cites: ${out.slice(0, 500)}`);
  }
  return found.map((f) => ({ code: f.code, line: f.line }));
}

async function shot(page, name, note) {
  const file = path.join(OUT, `${String(report.steps.length + 1).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  report.steps.push({ name, note, screenshot: path.relative(REPO, file), at_s: (Date.now() - t0) / 1000 });
  log(`${name}: ${note}`);
}

async function palette(page, command) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { visible: true });
  await page.keyboard.type(command, { delay: 5 });
  await until(`"${command}" in the command palette`, () =>
    page.$$eval('.quick-input-list .monaco-list-row', (rows, c) => rows.some((r) => (r.getAttribute('aria-label') || '').includes(c)), command),
  );
  await page.keyboard.press('Enter');
}

/** Types `value` into a number setting of the Settings editor (Preferences: Open User Settings). */
async function setNumber(page, id, value) {
  if (!(await page.$('.settings-editor'))) {
    await palette(page, 'Preferences: Open User Settings');
  }
  const search = await page.waitForSelector('.settings-editor .search-container textarea', { visible: true });
  if ((await search.evaluate((e) => e.value)) !== id) {
    await search.click({ clickCount: 3 });
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await page.keyboard.type(id);
  }
  // The settings list re-renders while it settles, so the input is looked up afresh on each try,
  // by its title ("Close Prior Work Threshold" for peerlint.closePriorWorkThreshold).
  const title = id.split('.').pop().replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const input = async () => {
    for (const item of await page.$$('.settings-editor .setting-item-number')) {
      const t = await item.$eval('.setting-item-title', (e) => (e.textContent || '').toLowerCase()).catch(() => '');
      if (t.includes(title)) {
        return item.$('input');
      }
    }
    return undefined;
  };
  await until(`${id} to read ${value}`, async () => {
    const field = await input();
    if (!field) {
      return false;
    }
    if (await field.evaluate((e, v) => e.value === v, value)) {
      return true;
    }
    await field.focus();
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await page.keyboard.type(value);
    await new Promise((r) => setTimeout(r, 300));
    return (await input())?.evaluate((e, v) => e.value === v, value);
  }, 30000, 200);
  await page.keyboard.press('Tab');
}

async function gotoLine(page, line) {
  await page.keyboard.down('Control');
  await page.keyboard.press('g');
  await page.keyboard.up('Control');
  await page.waitForSelector('.quick-input-widget input', { visible: true });
  await page.keyboard.type(String(line));
  await page.keyboard.press('Enter');
  await until(`the cursor on line ${line}`, async () => (await statusText(page)).includes(`Ln ${line},`));
}

async function statusText(page) {
  return page.$$eval('.statusbar-item', (items) => items.map((i) => i.textContent || '').join(' | '));
}

async function notifications(page) {
  return page.$$eval('.notifications-toasts .notification-list-item, .notifications-center .notification-list-item',
    (items) => items.map((i) => i.getAttribute('aria-label') || i.textContent || ''));
}

async function main() {
  for (const [what, p] of [['code-server (run e2e/install.sh)', CODE_SERVER], ['chromium', CHROMIUM], ['the server', SERVER], ['the .vsix (npm run package)', VSIX], ['the index', INDEX]]) {
    if (!fs.existsSync(p)) {
      throw new StepError(`missing ${what}: ${p}`);
    }
  }
  fs.mkdirSync(OUT, { recursive: true });
  for (const f of fs.readdirSync(OUT)) {
    if (/^(\d\d-.*|failed)\.png$/.test(f)) {
      fs.unlinkSync(path.join(OUT, f));
    }
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'peerlint-e2e-'));
  report.workspace = tmp;
  const dirs = prepare(tmp);
  const draft = path.join(dirs.ws, 'draft.tex');
  const bib = path.join(dirs.ws, 'refs.bib');
  const draftBefore = fs.readFileSync(draft, 'utf8');
  const bibBefore = fs.readFileSync(bib, 'utf8');
  const serverLog = path.join(tmp, 'server.log');
  const expected = await expectedFindings(dirs.ws, tmp);
  report.seen.expected = expected;
  let cs;
  let browser;
  let page;
  try {
    cs = await startCodeServer(dirs, tmp);
    log(`code-server on 127.0.0.1:${cs.port}`);
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1400,900', '--no-first-run'],
      defaultViewport: { width: 1400, height: 900 },
    });
    page = await browser.newPage();
    page.setDefaultTimeout(30000);
    await page.goto(`http://127.0.0.1:${cs.port}/?folder=${encodeURIComponent(dirs.ws)}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('.monaco-workbench .part.statusbar', { visible: true, timeout: 60000 });
    await until('the explorer to list draft.tex', () =>
      page.$$eval('.explorer-folders-view .monaco-list-row', (rows) => rows.some((r) => (r.textContent || '').includes('draft.tex'))), 60000);
    await shot(page, 'workbench', 'code-server with a copy of examples/ as the workspace');

    // Problems panel open first, so its rows can be read as the diagnostics arrive.
    await page.keyboard.down('Control');
    await page.keyboard.down('Shift');
    await page.keyboard.press('m');
    await page.keyboard.up('Shift');
    await page.keyboard.up('Control');
    await page.waitForSelector('.markers-panel', { visible: true });

    await page.keyboard.down('Control');
    await page.keyboard.press('p');
    await page.keyboard.up('Control');
    await page.waitForSelector('.quick-input-widget input', { visible: true });
    await page.keyboard.type('draft.tex');
    await until('draft.tex in quick open', () =>
      page.$$eval('.quick-input-list .monaco-list-row', (rows) => rows.some((r) => (r.getAttribute('aria-label') || '').includes('draft.tex'))));
    await page.keyboard.press('Enter');
    const opened = Date.now();
    await page.waitForSelector('.tab.active[aria-label*="draft.tex"], .tab.active[title*="draft.tex"]', { visible: true });
    log('draft.tex open');
    await until('peerlint diagnostics in the Problems panel', async () => (await problems(page)).some((x) => x.includes('peerlint')), 120000, 50);
    report.timings.open_to_first_diagnostics_s = (Date.now() - opened) / 1000;
    log(`first diagnostics after ${report.timings.open_to_first_diagnostics_s} s`);
    // Every finding of `peerlint check` on the same file, with its code and line.
    const want = expected.map((e) => `${e.code}@${e.line}`).sort();
    await until(`the Problems panel to list ${want.join(', ')}`, async () => {
      const r = await problems(page);
      report.seen.problems = r;
      const got = new Set(r.map(problemKey));
      return want.every((w) => got.has(w));
    }, 60000);
    report.timings.open_to_all_diagnostics_s = (Date.now() - opened) / 1000;
    await new Promise((r) => setTimeout(r, 1000));
    report.seen.problems = await problems(page);
    report.seen.editor_only = report.seen.problems.map(problemKey).filter((k) => k && !want.includes(k));
    report.seen.status_bar = await until('the status bar to show the index', async () => {
      const s = await statusText(page);
      return /peerlint: [\d,]+ papers · \w+/.test(s) ? s : undefined;
    });
    await shot(page, 'diagnostics', `${want.length} findings as \`peerlint check\` reports them: ${want.join(', ')}`);

    // A setting changed in the Settings editor reaches the running server: no restart, no reload.
    await setNumber(page, 'peerlint.closePriorWorkThreshold', '0.99');
    const changed = Date.now();
    await until('close-prior-work to go at closePriorWorkThreshold 0.99', async () =>
      !(await problems(page)).some((r) => problemKey(r) === 'close-prior-work@158'), 30000);
    report.timings.setting_applied_s = (Date.now() - changed) / 1000;
    await shot(page, 'setting-applied', `peerlint.closePriorWorkThreshold 0.99 in the Settings editor: close-prior-work gone after ${report.timings.setting_applied_s} s`);
    await setNumber(page, 'peerlint.closePriorWorkThreshold', '0.9');
    await until('close-prior-work back at closePriorWorkThreshold 0.9', async () =>
      (await problems(page)).some((r) => problemKey(r) === 'close-prior-work@158'), 30000);
    await page.keyboard.down('Control');
    await page.keyboard.press('w');
    await page.keyboard.up('Control');
    await until('draft.tex to be the active editor again', () => page.$('.tab.active[aria-label*="draft.tex"]'));

    // Hover the close-prior-work squiggle: its nearest papers.
    await gotoLine(page, 158);
    let tries = 0;
    const hover = await until('the hover with nearest papers', async () => {
      const text = await page.$$eval('.monaco-hover:not(.hidden)', (hs) => hs.map((h) => h.textContent || '').join('\n'));
      if (text.includes('Hierarchical')) {
        return text;
      }
      // The pointer onto the squiggle, a little further along each try (a move to where it already
      // is fires no event); after a few tries, the keyboard's Show Hover (Ctrl+K Ctrl+I) as well.
      const squiggle = await page.$('.squiggly-warning');
      if (squiggle) {
        const box = await squiggle.boundingBox();
        await page.mouse.move(5, 450);
        await page.mouse.move(box.x + 20 + (tries % 10) * 15, box.y + box.height / 2, { steps: 3 });
      }
      if (++tries % 4 === 0) {
        await page.keyboard.down('Control');
        await page.keyboard.press('k');
        await page.keyboard.press('i');
        await page.keyboard.up('Control');
      }
      return undefined;
    }, 45000, 700);
    report.seen.hover = hover.slice(0, 2000);
    await shot(page, 'hover', 'hover on the close-prior-work paragraph');
    await page.keyboard.press('Escape');
    await page.mouse.move(5, 450);

    // Check novelty from the command palette, the cursor in that paragraph.
    await page.click('.monaco-editor .view-lines');
    await gotoLine(page, 158);
    const novStart = Date.now();
    await palette(page, 'peerlint: Check novelty of selection/paragraph');
    const spinner = [];
    const novelty = await until('the novelty result notification', async () => {
      const s = await statusText(page);
      const m = s.match(/peerlint: [^|]*checking novelty[^|]*/);
      if (m && !spinner.includes(m[0].trim())) {
        spinner.push(m[0].trim());
      }
      const shown = await notifications(page);
      if (shown.some((n) => n.includes('peerlint: checking novelty')) && !spinner.includes('notification')) {
        spinner.push('notification');
      }
      return shown.find((n) => n.includes('peerlint: Novelty '));
    }, 240000, 100);
    report.timings.novelty_s = (Date.now() - novStart) / 1000;
    report.seen.novelty = novelty.slice(0, 2000);
    report.seen.novelty_progress = spinner;
    await new Promise((r) => setTimeout(r, 800)); // the toast slides in
    await shot(page, 'novelty', `Check novelty answered in ${report.timings.novelty_s} s`);
    await page.keyboard.press('Escape');

    // Cite this paper: the quick fix at the paragraph, then File: Save All.
    await gotoLine(page, 158);
    await page.keyboard.down('Control');
    await page.keyboard.press('.');
    await page.keyboard.up('Control');
    const action = await until('the "cite" quick fix', async () => {
      const items = await page.$$('.action-widget .monaco-list-row');
      for (const item of items) {
        const label = await item.evaluate((e) => e.getAttribute('aria-label') || e.textContent || '');
        if (label.includes('peerlint: cite')) {
          return { item, label };
        }
      }
      return undefined;
    });
    report.seen.cite_action = action.label;
    await shot(page, 'quick-fix', action.label);
    await action.item.click();
    await palette(page, 'File: Save All');
    const key = await until('draft.tex and refs.bib saved with the citation', () => {
      const draftNow = fs.readFileSync(draft, 'utf8');
      const bibNow = fs.readFileSync(bib, 'utf8');
      const added = [...draftNow.matchAll(/~\\cite\{([^}]+)\}/g)].map((m) => m[1]).filter((k) => !draftBefore.includes(`{${k}}`));
      return added.length === 1 && bibNow.startsWith(bibBefore.trimEnd().slice(0, 50)) && bibNow.includes(`{${added[0]},`) && !bibBefore.includes(`{${added[0]},`)
        ? added[0] : undefined;
    });
    const draftLines = fs.readFileSync(draft, 'utf8').split('\n');
    report.seen.cite = { key, line: draftLines.findIndex((l) => l.includes(`\\cite{${key}}`)) + 1,
      bib_added: fs.readFileSync(bib, 'utf8').slice(bibBefore.length).trim().slice(0, 600) };
    await shot(page, 'cited', `\\cite{${key}} in draft.tex, entry in refs.bib, both saved`);

    // Cancel a running check: Check novelty on the Introduction, Cancel on its notification; the
    // editor answers at once (Show related work lists papers while the cancelled check winds down).
    await gotoLine(page, 66);
    await palette(page, 'peerlint: Check novelty of selection/paragraph');
    const cancel = await until('the Cancel button of the running novelty check', async () => {
      for (const button of await page.$$('.notifications-toasts .notification-list-item .monaco-button')) {
        if ((await button.evaluate((b) => b.textContent || '')).trim() === 'Cancel') {
          return button;
        }
      }
      return undefined;
    });
    await shot(page, 'novelty-running', 'a second Check novelty, running, with its Cancel button');
    const cancelled = Date.now();
    await cancel.click();
    await until('the "cancelled" message', async () => (await notifications(page)).some((n) => n.includes('peerlint: checking novelty: cancelled.')), 10000);
    await palette(page, 'peerlint: Show related work');
    report.seen.related_after_cancel = await until('the related-work list after the cancel', async () => {
      const title = await page.$eval('.quick-input-widget .quick-input-title', (e) => e.textContent || '').catch(() => '');
      const rows = await page.$$eval('.quick-input-list .monaco-list-row', (rs) => rs.map((r) => r.getAttribute('aria-label') || ''));
      return title.includes('nearest published papers') && rows.length > 0 ? rows.slice(0, 3) : undefined;
    }, 30000);
    report.timings.cancel_to_related_work_s = (Date.now() - cancelled) / 1000;
    await shot(page, 'cancelled', `cancelled; Show related work answered ${report.timings.cancel_to_related_work_s} s later`);
    await page.keyboard.press('Escape');
    // The cancel reaches the server: the check stops after the LLM call in flight (server/lsp.py).
    report.seen.server_stopped = await until('the server log to say the cancelled check stopped', () =>
      fs.readFileSync(serverLog, 'utf8').split('\n').find((l) => l.includes('checking novelty: cancelled by the client')), 180000, 200);
    report.timings.cancel_to_server_stop_s = (Date.now() - cancelled) / 1000;
    log(`the server stopped the cancelled check ${report.timings.cancel_to_server_stop_s} s after Cancel`);
  } catch (e) {
    if (page) {
      await page.screenshot({ path: path.join(OUT, 'failed.png') }).catch(() => undefined);
    }
    throw e;
  } finally {
    report.finished = new Date().toISOString();
    report.total_s = (Date.now() - t0) / 1000;
    fs.writeFileSync(path.join(OUT, 'report.json'), JSON.stringify(report, null, 2));
    if (browser) {
      await browser.close().catch(() => undefined);
    }
    if (cs) {
      try {
        process.kill(-cs.proc.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      fs.writeFileSync(path.join(tmp, 'code-server.log'), cs.output());
    }
    if (!KEEP) {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
}

main().then(
  () => {
    log('passed');
  },
  (e) => {
    console.error(`e2e failed: ${e instanceof StepError ? e.message : e.stack}`);
    process.exitCode = 1;
  },
);
