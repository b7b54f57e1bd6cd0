-- User commands of the peerlint plugin; the server itself is registered by require('peerlint').setup().
if vim.g.loaded_peerlint then
  return
end
vim.g.loaded_peerlint = true

local function cmd(name, fn, opts)
  vim.api.nvim_create_user_command(name, function(args)
    require('peerlint')[fn](args)
  end, opts)
end

cmd('PeerlintNovelty', 'novelty', { range = true, desc = 'peerlint: check novelty of the paragraph at the cursor (or of the range)' })
cmd('PeerlintRankContributions', 'rank_contributions', { desc = 'peerlint: rank the \\items of the list at the cursor (Swiss tournament)' })
cmd('PeerlintRelated', 'related', { range = true, bang = true, desc = 'peerlint: nearest published papers (! fills the quickfix list)' })
cmd('PeerlintStatus', 'status', { bang = true, desc = 'peerlint: index and backend state (! prints the full JSON)' })
cmd('PeerlintReindex', 'reindex', { desc = 'peerlint: rebuild the index' })
cmd('PeerlintRestart', 'restart', { desc = 'peerlint: restart the language server' })
