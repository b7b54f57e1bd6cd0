"""A .tex outside any project (no \\documentclass, no root file including it) is checked on its own,
and the user is told so once, by the server and by `peerlint check` alike."""

from __future__ import annotations

from peerlint.latex.roots import pick_root


def test_a_lone_snippet_is_its_own_root_with_one_note(tmp_path):
    lone = tmp_path / "notes.tex"
    lone.write_text("Some notes on review rating prediction with hierarchical attention.\n")
    choice = pick_root(lone, workspace=tmp_path)
    assert choice.root == lone
    assert choice.note.startswith("notes.tex has no \\documentclass and no root file includes it: checked on its own")


def test_a_root_or_an_included_file_gets_no_such_note(tmp_path):
    (tmp_path / "main.tex").write_text("\\documentclass{article}\n\\begin{document}\n\\input{intro}\n\\end{document}\n")
    (tmp_path / "intro.tex").write_text("An introduction.\n")
    assert pick_root(tmp_path / "main.tex", workspace=tmp_path).note == ""
    included = pick_root(tmp_path / "intro.tex", workspace=tmp_path)
    assert included.root == tmp_path / "main.tex" and included.note == ""
