-- Headless scenario for a server that is missing or crashes (tests/test_neovim.py): open a .tex
-- file, wait until $PEERLINT_NVIM_WAIT_FOR (a Lua pattern) appears in a message or the time is up,
-- run :PeerlintStatus, and write every message to $PEERLINT_NVIM_RESULT as JSON.
local out = assert(os.getenv('PEERLINT_NVIM_RESULT'))
local wait_for = os.getenv('PEERLINT_NVIM_WAIT_FOR') or '^$'
local wait_ms = tonumber(os.getenv('PEERLINT_NVIM_WAIT_MS') or '20000')
local messages = {}
vim.notify = function(msg, level)
  table.insert(messages, { msg = tostring(msg), level = level })
end

local ok, err = pcall(function()
  vim.cmd.edit(vim.fn.fnameescape(assert(os.getenv('PEERLINT_NVIM_DRAFT'))))
  vim.wait(wait_ms, function()
    for _, m in ipairs(messages) do
      if m.msg:find(wait_for) then return true end
    end
    return false
  end, 50)
  vim.wait(1000) -- anything that would follow (another restart, a second message)
  vim.cmd('PeerlintStatus')
  vim.wait(500)
end)
vim.fn.writefile({ vim.json.encode({ ok = ok, error = ok and vim.NIL or tostring(err), messages = messages,
                                     buffer_lines = vim.api.nvim_buf_line_count(0) }) }, out)
vim.cmd('qa!')
