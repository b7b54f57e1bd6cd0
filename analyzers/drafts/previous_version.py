"""A file's previous version from git: what the revision judgments compare the draft with.

`git` runs as a plain subprocess (no shell), with a timeout, from the repository's folder; its
arguments are a resolved commit id and a path relative to the repository root, never document
text.  Everything a user's repository can be (no git, no repository, no commit yet, a detached
HEAD, a revision that does not exist, a shallow clone that lacks it, a file that is new or was
renamed since, a binary or huge blob) ends in a `PreviousText` whose `status` says which and whose
`message` names the fix; nothing here raises for them.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

GIT_TIMEOUT_S = 10.0
MAX_BYTES = 4_000_000  # a LaTeX file over 4 MB is generated or binary, not a draft to compare
# status values: "ok" (text holds the previous version); "new" (the file did not exist then: every
# paragraph is new); the rest mean "nothing to compare with", with a message saying why
OK, NEW = "ok", "new"
UNAVAILABLE = ("no-git", "not-in-repo", "no-commit", "bad-revision", "binary", "too-large", "git-error")


@dataclass(frozen=True)
class PreviousText:
    """The text of `path` at `rev` (resolved to `commit`), or why there is none."""

    path: Path
    rev: str
    status: str
    text: str | None = None
    commit: str = ""
    old_path: Path | None = None  # where the file was at `rev` (differs when renamed since)
    message: str = ""

    @property
    def comparable(self) -> bool:
        """True when paragraphs can be judged against something (a previous text, or "all new")."""
        return self.status in (OK, NEW)


class GitError(RuntimeError):
    """git could not be run or did not answer in time (the message says which)."""


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    timeout = GIT_TIMEOUT_S
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        return subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=repo, capture_output=True,
                              timeout=timeout, env=env, stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not answer within {timeout:.0f} s") from None
    except OSError as exc:
        raise GitError(f"git could not run: {exc}") from None


def _out(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout.decode("utf-8", "replace").strip()


def _err(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"exit status {proc.returncode}"


def repo_root(path: Path) -> Path | None:
    """The top folder of the git work tree holding `path`, or None (GitError when git cannot run)."""
    folder = path if path.is_dir() else path.parent
    if not folder.is_dir():
        return None
    proc = _git(folder, "rev-parse", "--show-toplevel")
    return Path(_out(proc)) if proc.returncode == 0 and _out(proc) else None


def resolve_commit(repo: Path, rev: str) -> str | None:
    """The commit id `rev` names in `repo`, or None.  An option-like rev is refused, not passed on."""
    if not rev or rev.startswith("-") or any(c in rev for c in "\0\n"):
        return None
    proc = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    return _out(proc) if proc.returncode == 0 and _out(proc) else None


def is_shallow(repo: Path) -> bool:
    return _out(_git(repo, "rev-parse", "--is-shallow-repository")) == "true"


def relative(path: Path, repo: Path) -> str | None:
    """`path` relative to the repository root, in git's spelling; None when it lies outside."""
    try:
        return Path(os.path.realpath(path)).relative_to(os.path.realpath(repo)).as_posix()
    except ValueError:
        return None


def renamed_from(repo: Path, commit: str, rel: str) -> str | None:
    """The path `rel` had at `commit`, when git sees a rename between then and the work tree."""
    proc = _git(repo, "diff", "--no-ext-diff", "--name-status", "-M", "-z", "--diff-filter=R", commit, "--")
    if proc.returncode != 0:
        return None
    fields = proc.stdout.decode("utf-8", "replace").split("\0")
    for i in range(0, len(fields) - 2, 3):  # "R<score>", old, new
        if fields[i].startswith("R") and fields[i + 2] == rel:
            return fields[i + 1]
    return None


def _blob_size(repo: Path, spec: str) -> int | None:
    proc = _git(repo, "cat-file", "-s", spec)
    return int(_out(proc)) if proc.returncode == 0 and _out(proc).isdigit() else None


@dataclass
class GitHistory:
    """One repository at one revision: blobs read once and kept (the editor asks again on every save)."""

    repo: Path
    rev: str
    commit: str
    max_bytes: int = MAX_BYTES
    _blobs: dict[str, PreviousText] = field(default_factory=dict)

    def previous(self, path: Path) -> PreviousText:
        path = Path(path)
        rel = relative(path, self.repo)
        if rel is None:
            return PreviousText(path, self.rev, "not-in-repo", commit=self.commit,
                                message=f"{path} is outside the repository at {self.repo}")
        if rel not in self._blobs:
            self._blobs[rel] = self._read(path, rel)
        return self._blobs[rel]

    def _read(self, path: Path, rel: str) -> PreviousText:
        short = self.commit[:10]
        old = rel
        size = _blob_size(self.repo, f"{self.commit}:{rel}")
        if size is None:
            old = renamed_from(self.repo, self.commit, rel)
            size = _blob_size(self.repo, f"{self.commit}:{old}") if old else None
            if size is None:
                return PreviousText(path, self.rev, NEW, commit=self.commit,
                                    message=f"{rel} did not exist at {self.rev} ({short}): every paragraph is new")
        old_path = self.repo / old
        if size > self.max_bytes:
            return PreviousText(path, self.rev, "too-large", commit=self.commit, old_path=old_path,
                                message=f"{old} at {self.rev} is {size / 1e6:.1f} MB, over the "
                                        f"{self.max_bytes / 1e6:.0f} MB a draft may have: not compared")
        proc = _git(self.repo, "cat-file", "blob", f"{self.commit}:{old}")
        if proc.returncode != 0:
            return PreviousText(path, self.rev, "git-error", commit=self.commit, old_path=old_path,
                                message=f"git cannot read {old} at {self.rev}: {_err(proc)}")
        data = proc.stdout
        if b"\0" in data[:8192]:
            return PreviousText(path, self.rev, "binary", commit=self.commit, old_path=old_path,
                                message=f"{old} at {self.rev} is a binary file: not compared")
        note = f" (renamed from {old})" if old != rel else ""
        return PreviousText(path, self.rev, OK, data.decode("utf-8", "replace"), self.commit, old_path,
                            f"compared with {self.rev} ({short}){note}")

    def read(self, path: Path) -> str:
        """A `Reader` for `parse_project`: the file's text at this revision, OSError when it has none."""
        found = self.previous(Path(path))
        if found.text is None:
            raise FileNotFoundError(found.message)
        return found.text


def open_history(path: Path, rev: str = "HEAD") -> GitHistory | PreviousText:
    """The repository holding `path` at `rev`, or a PreviousText saying why there is none."""
    path = Path(path).absolute()
    try:
        repo = repo_root(path)
        if repo is None:
            return PreviousText(path, rev, "not-in-repo", message=(
                f"{path.name} is not in a git repository: nothing to compare with (commit it, or let the "
                "editor compare with the text at open)"))
        commit = resolve_commit(repo, rev)
        return GitHistory(repo, rev, commit) if commit else _no_commit(repo, path, rev)
    except GitError as exc:
        return PreviousText(path, rev, "no-git" if "not installed" in str(exc) else "git-error", message=str(exc))


def _no_commit(repo: Path, path: Path, rev: str) -> PreviousText:
    if not _out(_git(repo, "rev-list", "-n", "1", "--all")):
        if rev == "HEAD":
            return PreviousText(path, rev, NEW, message="the repository has no commit yet: every paragraph is new")
        return PreviousText(path, rev, "no-commit", message=f"no revision {rev!r}: the repository has no commit yet")
    hint = (": the clone is shallow and may lack it (fetch more history with `git fetch --unshallow`)"
            if is_shallow(repo) else " (list revisions with `git log --oneline`)")
    return PreviousText(path, rev, "bad-revision", message=f"no revision {rev!r} in {repo}{hint}")


OUTSIDE_GIT = ("not-in-repo", "no-git")


def outside_git(path: Path) -> bool:
    """True when `path` is in no git repository (or git is not installed): the editor then compares
    with the text at open; a repository with a bad revision is not outside git (that is an error)."""
    found = open_history(path)
    return isinstance(found, PreviousText) and found.status in OUTSIDE_GIT


def previous_text(path: Path, rev: str = "HEAD") -> PreviousText:
    """The text of `path` at `rev` (default HEAD), or a PreviousText saying why there is none."""
    found = open_history(path, rev)
    return found.previous(Path(path).absolute()) if isinstance(found, GitHistory) else found
