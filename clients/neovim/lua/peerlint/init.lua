-- peerlint for Neovim: registers the peerlint language server for tex/plaintex buffers and adds
-- :PeerlintNovelty, :PeerlintRelated, :PeerlintRankContributions, :PeerlintStatus, :PeerlintReindex and :PeerlintRestart.
--
--   require('peerlint').setup({
--     cmd = { 'peerlint', 'serve' },                  -- or { '/path/.venv/bin/python', '-m', 'peerlint', 'serve' }
--     settings = { indexPath = '', backend = 'auto', model = '', ollamaHost = '' },  -- server/config.py
--   })
--
-- Neovim >= 0.11 uses vim.lsp.config/vim.lsp.enable; 0.8-0.10 start the client from a FileType
-- autocmd with vim.lsp.start. Edits (Cite this paper, Disable ...) arrive as workspace/applyEdit
-- or code-action edits, which Neovim applies natively (write the .bib with :wall).

local M = {}

M.name = 'peerlint'

M.defaults = {
  cmd = { 'peerlint', 'serve' },
  filetypes = { 'tex', 'plaintex' },
  -- the project root: the nearest directory holding one of these, else the file's directory
  root_markers = { '.git', '.latexmkrc', 'latexmkrc', '.peerlint' },
  -- server settings, camelCase as in docs/usage/settings.md (server/config.py)
  settings = {},
  -- echo $/progress (LLM checks, novelty, index rebuilds) in the command line
  progress = true,
  -- restart a crashed server at most this often within restart_window_s, then stop and say why
  max_restarts = 3,
  restart_window_s = 180,
  -- show the server's per-section summaries (quality, venue style) as code lenses
  code_lens = true,
  on_attach = nil,
  -- 'auto': vim.lsp.config/vim.lsp.enable on Neovim >= 0.11, else vim.lsp.start from a FileType
  -- autocmd; 'start' forces the latter (the tests use it to cover older Neovims)
  registration = 'auto',
}

M.config = nil
M.last_status = nil ---@type table|nil  the last answer of peerlint.status
M.last_related = nil ---@type table|nil the last answer of peerlint.relatedWork
M.last_ranking = nil ---@type table|nil the last answer of peerlint.rankContributions
M.last_novelty = nil ---@type table|nil the last answer of peerlint.checkNovelty

local crashes = {} ---@type number[]  times (s) the server exited unexpectedly
local stopped_on_purpose = {} ---@type table<integer, true>  client ids stopped by :PeerlintRestart
local gave_up = false
local uses_enable = false -- registered with vim.lsp.enable (else FileType + vim.lsp.start)
local missing_cmd = nil ---@type string|nil  the server command, when it was not found

local has = function(v) return vim.fn.has('nvim-' .. v) == 1 end

local ui = require('peerlint.ui')
local notify = ui.notify

--- Neovim 0.11 made client methods use `:`; older versions use `.`.
local function request(client, method, params, handler, bufnr)
  if has('0.11') then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function client_notify(client, method, params)
  if has('0.11') then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

local function client_stop(client, force)
  if has('0.11') then
    return client:stop(force)
  end
  return client.stop(force)
end

--- How the server was registered: 'enable' (vim.lsp.enable) or 'start' (FileType + vim.lsp.start).
function M.registered_with()
  return uses_enable and 'enable' or 'start'
end

--- The peerlint client of `bufnr` (0: current), or nil.
function M.client(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr or vim.api.nvim_get_current_buf()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local clients = get({ name = M.name, bufnr = bufnr })
  if #clients == 0 then
    clients = get({ name = M.name })
  end
  return clients[1]
end

function M.root_dir(bufnr)
  local fname = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fs.dirname(fname)
  if dir == nil or dir == '' then
    return vim.fn.getcwd()
  end
  local markers = (M.config or M.defaults).root_markers
  local found = vim.fs.find(markers, { path = dir, upward = true })[1]
  return found and vim.fs.dirname(found) or dir
end

-- -- starting, crashes and restarts -------------------------------------------------------------

--- Loaded buffers of the configured filetypes: where a restarted server is attached again.
local function server_buffers()
  local fts = (M.config or M.defaults).filetypes
  local bufs = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(fts, vim.bo[buf].filetype) then
      table.insert(bufs, buf)
    end
  end
  return bufs
end

local function on_exit(code, signal, client_id)
  if stopped_on_purpose[client_id] or (code == 0 and signal == 0) then
    stopped_on_purpose[client_id] = nil
    return
  end
  local now = vim.uv and vim.uv.now() / 1000 or vim.loop.now() / 1000
  local cfg = M.config or M.defaults
  local recent = {}
  for _, t in ipairs(crashes) do
    if now - t < cfg.restart_window_s then
      table.insert(recent, t)
    end
  end
  table.insert(recent, now)
  crashes = recent
  vim.schedule(function()
    if #crashes > cfg.max_restarts then
      gave_up = true
      if uses_enable then
        vim.lsp.enable(M.name, false)
      end
      notify(('the language server stopped %d times in %d minutes (last exit code %d), so it will not be restarted again. '
        .. 'Its log: %s and :lua vim.cmd.edit(vim.lsp.get_log_path()). Fix the cause, then run :PeerlintRestart.')
        :format(#crashes, math.floor(cfg.restart_window_s / 60 + 0.5), code,
          (cfg.settings.logFile ~= nil and cfg.settings.logFile ~= '') and cfg.settings.logFile or '~/.cache/peerlint/server.log'),
        vim.log.levels.ERROR)
      return
    end
    notify(('the language server stopped unexpectedly (exit code %d); restarting it (%d of %d).')
      :format(code, #crashes, cfg.max_restarts), vim.log.levels.WARN)
    for _, buf in ipairs(server_buffers()) do
      M.start(buf)
    end
  end)
end

--- Keep the section summaries (code lenses) of `bufnr` fresh: after attaching, leaving insert mode and saving.
local function show_code_lenses(client, bufnr)
  if not (client.server_capabilities or {}).codeLensProvider then
    return
  end
  local function refresh()
    -- 0.10+: refresh({ bufnr }); 0.8/0.9: refresh() for the current buffer
    if not pcall(vim.lsp.codelens.refresh, { bufnr = bufnr }) then
      pcall(vim.lsp.codelens.refresh)
    end
  end
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufWritePost', 'BufEnter' }, { buffer = bufnr, callback = refresh })
  vim.defer_fn(refresh, 1500)
end

--- The client configuration shared by vim.lsp.config and vim.lsp.start.
function M.lsp_config(cfg)
  return {
    name = M.name,
    cmd = cfg.cmd,
    filetypes = cfg.filetypes,
    init_options = next(cfg.settings) and vim.deepcopy(cfg.settings) or nil,
    -- answered to workspace/configuration (section "peerlint") and pushed once on start;
    -- an empty table would travel as a JSON list, which the server rejects
    settings = { peerlint = next(cfg.settings) and vim.deepcopy(cfg.settings) or vim.empty_dict() },
    on_exit = on_exit,
    on_attach = function(client, bufnr)
      if cfg.code_lens ~= false then
        show_code_lenses(client, bufnr)
      end
      if cfg.on_attach then
        cfg.on_attach(client, bufnr)
      end
    end,
  }
end

--- Start (or reuse) the client for `bufnr`, as vim.lsp.enable does on 0.11.
function M.start(bufnr)
  if gave_up then
    return nil
  end
  local config = vim.tbl_extend('force', M.lsp_config(M.config or M.defaults), { root_dir = M.root_dir(bufnr) })
  return vim.lsp.start(config, { bufnr = bufnr })
end

local function missing_message(exe)
  return ('the language server command "%s" was not found. Install it with `pip install peerlint` '
    .. '(or `make install` in a peerlint checkout) and, if it is not on your PATH, give its full path: '
    .. "require('peerlint').setup({ cmd = { '/path/to/peerlint/.venv/bin/peerlint', 'serve' } })"):format(exe)
end

--- Is the server command there?
function M.server_available(cfg)
  return vim.fn.executable(cfg.cmd[1]) == 1
end

-- -- commands --------------------------------------------------------------------------------

--- Run a server command with `args`; `done(err, result)` gets the answer.
function M.exec(command, args, done, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    local why = gave_up and 'it was stopped after repeated crashes; run :PeerlintRestart'
      or missing_cmd and ('its command "%s" was not found (pip install peerlint)'):format(missing_cmd)
      or 'open a .tex file first (and check :checkhealth vim.lsp)'
    notify('the language server is not running: ' .. why, vim.log.levels.WARN)
    if done then
      done('not running', nil)
    end
    return
  end
  request(client, 'workspace/executeCommand', { command = command, arguments = args }, function(err, result)
    if err then
      notify(('%s failed: %s'):format(command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if done then
      done(err, result)
    end
  end, bufnr)
end

--- {uri, line, character} of the cursor, or of a range (its first line, with `end` at its last line's end), in the server's encoding.
function M.where(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  local encoding = client and client.offset_encoding or 'utf-16'
  local params = vim.lsp.util.make_position_params(0, encoding)
  local where = { uri = params.textDocument.uri, line = params.position.line, character = params.position.character }
  if opts and opts.range and opts.range > 0 then
    -- a :'<,'>Command range: the server checks exactly those lines (checkNovelty's `end`)
    where.line, where.character = opts.line1 - 1, 0
    local last = vim.api.nvim_buf_get_lines(bufnr, opts.line2 - 1, opts.line2, false)[1] or ''
    local ok, col = pcall(vim.str_utfindex, last, encoding) -- 0.11: (s, encoding)
    if not ok or type(col) ~= 'number' then
      local utf32, utf16 = vim.str_utfindex(last) -- before 0.11: both counts
      col = encoding == 'utf-32' and utf32 or utf16
    end
    where['end'] = { line = opts.line2 - 1, character = col }
  end
  return where
end

function M.novelty(opts)
  M.exec('peerlint.checkNovelty', { M.where(opts) }, function(err, result)
    if not err then
      M.last_novelty = result
      ui.show_novelty(result)
    end
  end)
end

function M.related(opts)
  M.exec('peerlint.relatedWork', { M.where(opts) }, function(err, result)
    if not err then
      M.last_related = result
      ui.show_related(result, opts and opts.bang)
    end
  end)
end

function M.rank_contributions(opts)
  M.exec('peerlint.rankContributions', { M.where() }, function(err, result)
    if err or type(result) ~= 'table' then
      return
    end
    M.last_ranking = result
    if result.ok then
      notify(result.message or 'contributions ranked')
    else
      notify('cannot rank contributions here: ' .. tostring(result.reason), vim.log.levels.WARN)
    end
  end)
end

function M.status(opts)
  M.exec('peerlint.status', {}, function(err, result)
    if err or type(result) ~= 'table' then
      return
    end
    M.last_status = result
    if opts and opts.bang then
      notify(vim.inspect(result))
    else
      notify(table.concat(ui.status_lines(result), '\n'))
    end
  end)
end

function M.reindex()
  notify('rebuilding the index…')
  M.exec('peerlint.reindex', {}, function(err, r)
    if not err and type(r) == 'table' then
      notify(('index rebuilt: %s papers, %s chunks (%s newly embedded)'):format(r.papers, r.chunks, r.embedded))
    end
  end)
end

function M.restart()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, client in ipairs(get({ name = M.name })) do
    stopped_on_purpose[client.id] = true
    client_stop(client, true)
  end
  crashes, gave_up = {}, false
  if uses_enable then
    vim.lsp.enable(M.name, true)
  end
  vim.defer_fn(function()
    for _, buf in ipairs(server_buffers()) do
      M.start(buf)
    end
  end, 500)
end

--- Change server settings at run time (e.g. { backend = 'ollama', model = 'qwen2.5:7b' }).
function M.update_settings(changes)
  local cfg = M.config or M.defaults
  cfg.settings = vim.tbl_deep_extend('force', cfg.settings, changes)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, client in ipairs(get({ name = M.name })) do
    client.settings = { peerlint = next(cfg.settings) and vim.deepcopy(cfg.settings) or vim.empty_dict() }
    client_notify(client, 'workspace/didChangeConfiguration', { settings = client.settings })
  end
end

--- Text of the running server work, for a statusline: `%{v:lua.require'peerlint'.statusline()}`.
function M.statusline()
  return ui.statusline()
end

-- -- setup --------------------------------------------------------------------------------------

function M.setup(opts)
  if not has('0.8') then
    notify('needs Neovim 0.8 or newer (vim.lsp.start)', vim.log.levels.ERROR)
    return
  end
  local cfg = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  if opts and opts.cmd then
    cfg.cmd = opts.cmd -- lists are replaced, not merged
  end
  if opts and opts.filetypes then
    cfg.filetypes = opts.filetypes
  end
  M.config = cfg
  local group = vim.api.nvim_create_augroup('peerlint', { clear = true })
  ui.echo_progress = cfg.progress
  ui.setup_progress(group, M.name)

  -- results of server commands run from code actions (Check novelty, Show related work)
  vim.lsp.commands['peerlint.relatedWork'] = function(command, ctx)
    M.exec('peerlint.relatedWork', command.arguments, function(err, result)
      if not err then
        M.last_related = result
        ui.show_related(result)
      end
    end, ctx.bufnr)
  end
  vim.lsp.commands['peerlint.checkNovelty'] = function(command, ctx)
    M.exec('peerlint.checkNovelty', command.arguments, function(err, result)
      if not err then
        M.last_novelty = result
      ui.show_novelty(result)
      end
    end, ctx.bufnr)
  end

  if not M.server_available(cfg) then
    -- one clear message, when the first LaTeX buffer opens
    missing_cmd = cfg.cmd[1]
    vim.api.nvim_create_autocmd('FileType', {
      group = group,
      pattern = cfg.filetypes,
      once = true,
      callback = function()
        notify(missing_message(missing_cmd), vim.log.levels.ERROR)
      end,
    })
    return
  end
  missing_cmd = nil
  local lsp_config = M.lsp_config(cfg)
  uses_enable = has('0.11') and cfg.registration ~= 'start'
  if uses_enable then
    lsp_config.root_dir = function(bufnr, on_dir)
      on_dir(M.root_dir(bufnr))
    end
    vim.lsp.config(M.name, lsp_config)
    vim.lsp.enable(M.name)
  else
    vim.api.nvim_create_autocmd('FileType', {
      group = group,
      pattern = cfg.filetypes,
      callback = function(ev)
        M.start(ev.buf)
      end,
    })
    for _, buf in ipairs(server_buffers()) do -- setup() ran after they were opened (lazy loading)
      M.start(buf)
    end
  end
end

return M
