-- How peerlint's answers are shown in Neovim: notifications, vim.ui.select / quickfix lists of
-- papers, the status summary, and $/progress in the command line and the statusline.

local U = {}

U.progress = {} ---@type table<string, string>  token -> text of running server work
U.echo_progress = true

function U.notify(msg, level)
  vim.notify('peerlint: ' .. msg, level or vim.log.levels.INFO, { title = 'peerlint' })
end

local notify = U.notify

local function present(x)
  return x ~= nil and x ~= vim.NIL and x ~= ''
end

function U.show_novelty(result)
  if type(result) ~= 'table' then
    return
  end
  if result.ok then
    notify(result.message or 'novelty checked')
  else
    notify('cannot check novelty here: ' .. tostring(result.reason), vim.log.levels.WARN)
  end
end

function U.paper_label(p)
  local where = table.concat(vim.tbl_filter(present, { present(p.venue) and p.venue or '', present(p.year) and tostring(p.year) or '' }), ' ')
  local sim = type(p.similarity) == 'number' and ('%.3f'):format(p.similarity) or '?'
  return ('[%s] %s%s'):format(sim, p.title, where ~= '' and (' (' .. where .. ')') or '')
end

local function open_url(url)
  if vim.ui.open then
    vim.ui.open(url)
  else
    vim.fn.setreg('+', url)
    notify('link copied: ' .. url)
  end
end

--- Show the nearest papers: vim.ui.select (picking one opens its link), or the quickfix list.
function U.show_related(papers, to_quickfix)
  if type(papers) ~= 'table' or #papers == 0 then
    notify('no related work found here: put the cursor in a paragraph of prose (or run :PeerlintReindex)',
      vim.log.levels.WARN)
    return
  end
  if to_quickfix then
    local items = {}
    for _, p in ipairs(papers) do
      local url = present(p.url) and p.url or ''
      table.insert(items, { text = U.paper_label(p) .. (url ~= '' and ('  ' .. url) or '') })
    end
    vim.fn.setqflist({}, ' ', { title = 'peerlint: related work', items = items })
    vim.cmd('botright copen')
    return
  end
  vim.ui.select(papers, { prompt = 'peerlint: nearest published papers', format_item = U.paper_label }, function(p)
    if not p then
      return
    end
    if present(p.url) then
      open_url(p.url)
    else
      notify(('"%s" has no link in the index'):format(p.title))
    end
  end)
end

function U.status_lines(st)
  local index, llm = st.index or {}, st.llm or {}
  local lines = {}
  if index.ok then
    table.insert(lines, ('index: %d papers in %s'):format(index.papers or 0, index.path or '?'))
  else
    table.insert(lines, 'index: not available: ' .. tostring(index.error ~= vim.NIL and index.error or 'still loading'))
  end
  local backend = (llm.backend ~= vim.NIL and llm.backend) or llm.configured or 'auto'
  local model = (llm.model ~= vim.NIL and llm.model) and (' (' .. llm.model .. ')') or ''
  local err = (llm.error ~= nil and llm.error ~= vim.NIL) and (': ' .. llm.error) or ''
  table.insert(lines, ('LLM backend: %s%s%s'):format(backend, model, err))
  table.insert(lines, 'analyzers: ' .. table.concat(st.analyzers or {}, ', '))
  local counts = {}
  for name, n in pairs(st.analyzed or {}) do
    table.insert(counts, ('%s=%d'):format(name, n))
  end
  table.sort(counts)
  table.insert(lines, 'paragraphs analysed: ' .. (#counts > 0 and table.concat(counts, ' ') or 'none yet'))
  return lines
end

--- Text of the running server work, for a statusline.
function U.statusline()
  local parts = {}
  for _, text in pairs(U.progress) do
    table.insert(parts, text)
  end
  return table.concat(parts, ' · ')
end

local function on_progress(name, client_id, token, value)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or client.name ~= name or type(value) ~= 'table' then
    return
  end
  local key = tostring(token)
  if value.kind == 'begin' then
    U.progress[key] = value.title or 'working'
  elseif value.kind == 'report' and U.progress[key] then
    U.progress[key] = U.progress[key]:gsub(' %d+%%$', '') .. (value.percentage and (' ' .. value.percentage .. '%') or '')
  elseif value.kind == 'end' then
    local title = U.progress[key] or 'peerlint'
    U.progress[key] = nil
    if U.echo_progress then
      vim.api.nvim_echo({ { title:gsub(' %d+%%$', '') .. ': ' .. (value.message or 'done') } }, false, {})
    end
    return
  end
  if U.echo_progress then
    vim.api.nvim_echo({ { U.progress[key] .. '…' } }, false, {})
  end
end

--- Follow $/progress of the client called `name`.
function U.setup_progress(group, name)
  if vim.fn.has('nvim-0.10') == 1 then
    vim.api.nvim_create_autocmd('LspProgress', {
      group = group,
      callback = function(ev)
        local params = ev.data and ev.data.params or {}
        on_progress(name, ev.data and ev.data.client_id, params.token, params.value)
      end,
    })
  else -- 0.8/0.9: wrap the $/progress handler
    local default = vim.lsp.handlers['$/progress']
    vim.lsp.handlers['$/progress'] = function(err, result, ctx, config)
      if result then
        on_progress(name, ctx.client_id, result.token, result.value)
      end
      if default then
        return default(err, result, ctx, config)
      end
    end
  end
end

return U
