-- Minimal init for headless tests: this checkout's plugin and nothing of the user's.
--   nvim --headless --clean -u clients/neovim/tests/minimal_init.lua -c 'luafile clients/neovim/tests/e2e.lua'
-- PEERLINT_NVIM_CMD (JSON list) is the server command, PEERLINT_NVIM_SETTINGS (JSON object) its settings,
-- PEERLINT_NVIM_REGISTRATION 'auto' or 'start' (vim.lsp.start, as on Neovim < 0.11).
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local plugin_root = vim.fn.fnamemodify(here, ':h')
vim.opt.runtimepath:prepend(plugin_root)
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.cmd('filetype plugin on')
vim.cmd('runtime plugin/peerlint.lua')

local cmd = vim.json.decode(os.getenv('PEERLINT_NVIM_CMD') or '["peerlint", "serve"]')
local settings = vim.json.decode(os.getenv('PEERLINT_NVIM_SETTINGS') or '{}')
require('peerlint').setup({ cmd = cmd, settings = settings, registration = os.getenv('PEERLINT_NVIM_REGISTRATION') or 'auto' })
