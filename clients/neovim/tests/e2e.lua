-- The headless Neovim scenario tests/test_neovim.py runs against the real server: open the draft,
-- wait for diagnostics, apply *Cite this paper*, write all buffers, run :PeerlintStatus,
-- :PeerlintNovelty and :PeerlintRelated!. Everything observed goes to $PEERLINT_NVIM_RESULT as JSON.
local draft = assert(os.getenv('PEERLINT_NVIM_DRAFT'), 'PEERLINT_NVIM_DRAFT not set')
local out = assert(os.getenv('PEERLINT_NVIM_RESULT'), 'PEERLINT_NVIM_RESULT not set')
local timeout = tonumber(os.getenv('PEERLINT_NVIM_TIMEOUT_MS') or '150000')
local cite_title = os.getenv('PEERLINT_NVIM_CITE_TITLE') or ''
local peerlint = require('peerlint')

local result = { nvim = tostring(vim.version()), steps = {}, messages = {}, progress = {} }

local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(result.messages, { msg = tostring(msg), level = level })
  return notify(msg, level, opts)
end
vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(ev)
    local value = ev.data and ev.data.params and ev.data.params.value or {}
    table.insert(result.progress, { kind = value.kind, title = value.title, message = value.message })
  end,
})

result.server_messages = {} -- window/showMessage, e.g. a setting the server rejected
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx, config)
  table.insert(result.server_messages, { type = params.type, message = params.message })
  return show_message(err, params, ctx, config)
end

local function step(name) table.insert(result.steps, name) end

local function wait(what, ms, cond)
  if not vim.wait(ms, cond, 100) then
    error(('timed out after %d ms waiting for %s'):format(ms, what))
  end
end

local function scenario()
  vim.cmd.edit(vim.fn.fnameescape(draft))
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype
  result.registration = peerlint.registered_with()
  step('opened')

  wait('the peerlint client to attach', 60000, function() return peerlint.client(buf) ~= nil end)
  local client = peerlint.client(buf)
  result.client = { name = client.name, root_dir = client.config.root_dir or client.root_dir,
                    init_options = client.config.init_options }
  step('attached')

  wait('peerlint diagnostics', timeout, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == 'peerlint' then return true end
    end
    return false
  end)
  vim.wait(1000) -- a second publish (same analysis, other files of the project) may follow
  result.diagnostics = {}
  local target
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, code = d.code,
                                       severity = d.severity, source = d.source, message = d.message })
    if d.code == 'close-prior-work' and not target then target = d end
  end
  step('diagnostics')

  -- *Cite this paper* on the close-prior-work diagnostic, through Neovim's own code-action path
  assert(target, 'no close-prior-work diagnostic')
  local before = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  vim.api.nvim_win_set_cursor(0, { target.lnum + 1, target.col })
  local titles = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(titles, action.title)
      return action.title:find('peerlint: cite', 1, true) == 1 and action.title:find(cite_title, 1, true) ~= nil
    end,
  })
  wait('the cite edit in the buffer', 60000, function()
    local now = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    return table.concat(now, '\n') ~= table.concat(before, '\n')
  end)
  result.code_action_titles = titles
  local after = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  result.changed_lines = {}
  for i = 1, math.max(#before, #after) do
    if before[i] ~= after[i] then
      table.insert(result.changed_lines, { lnum = i - 1, before = before[i], after = after[i] })
    end
  end
  vim.cmd('silent wall')
  result.modified_after_wall = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      table.insert(result.modified_after_wall, vim.api.nvim_buf_get_name(b))
    end
  end
  step('cited')

  -- commands
  vim.api.nvim_win_set_cursor(0, { target.lnum + 2, 0 })
  vim.cmd('PeerlintStatus')
  wait(':PeerlintStatus', 30000, function() return peerlint.last_status ~= nil end)
  result.status = peerlint.last_status
  step('status')

  if os.getenv('PEERLINT_NVIM_NOVELTY') ~= '0' then -- the LLM makes this the slow step
    vim.cmd('PeerlintNovelty')
    wait(':PeerlintNovelty', 300000, function() return peerlint.last_novelty ~= nil end)
    result.novelty = peerlint.last_novelty
    step('novelty')
  end

  vim.cmd('PeerlintRelated!')
  wait(':PeerlintRelated!', 60000, function() return peerlint.last_related ~= nil end)
  result.related = peerlint.last_related
  result.quickfix = vim.tbl_map(function(item) return item.text end, vim.fn.getqflist())
  step('related')

  vim.cmd('cclose')
  vim.api.nvim_set_current_buf(buf)
  local item_line
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:find('\\item We describe RASP', 1, true) then item_line = i end
  end
  vim.api.nvim_win_set_cursor(0, { item_line, 4 })
  vim.cmd('PeerlintRankContributions')
  wait(':PeerlintRankContributions', 120000, function() return peerlint.last_ranking ~= nil end)
  result.ranking = peerlint.last_ranking
  step('ranking')
end

local ok, err = xpcall(scenario, debug.traceback)
result.ok = ok
result.error = ok and vim.NIL or tostring(err)
vim.fn.writefile({ vim.json.encode(result) }, out)
vim.cmd('qa!')
