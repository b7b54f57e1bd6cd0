"""Obviously worse versions of a published paragraph, for training and checking the quality scale.

`degrade(text, kind, lexicon)` is deterministic: its randomness is seeded by a hash of the text, the
kind and the lexicon, so every run and machine makes the same degraded text.  Kinds:

* typos: about one word in eight of four letters or more gets two neighbouring letters swapped;
* fillers: "basically", "kind of", "you know" ... before about one clause in three;
* informal: contractions, "we kinda", "a lot of", "stuff", sentence-initial "So," / "Anyway," (one
  sentence in three, one at least);
* hedging: "maybe", "we think that", "it might be that" ... before about one sentence in two;
* lowercase: the whole paragraph in lower case;
* combined: issue 34's check — lower case, fillers ("basically", "kind of"), "we kinda" and swapped
  letters together.

Two disjoint word lists (`lexicon="train"` / `"test"`) keep the scale honest: its head learns from
the train list's fillers and hedges, the bench measures it on the test list's, so a head that only
memorised "basically" would fail there.
"""

from __future__ import annotations

import hashlib
import random
import re

KINDS = ("typos", "fillers", "informal", "hedging", "lowercase")
ALL_KINDS = KINDS + ("combined",)

LEXICONS = {
    "train": {
        "fillers": ["basically", "kind of", "you know,", "like,", "actually", "pretty much", "just"],
        "hedges": ["maybe", "we think that", "it might be that", "perhaps", "it seems like", "possibly"],
        "openers": ["So,", "Anyway,", "Well,", "OK so"],
        "nouns": {"results": "stuff we got", "method": "thing", "approach": "idea thing"},
    },
    "test": {
        "fillers": ["sort of", "literally", "I mean,", "honestly", "really", "more or less", "totally"],
        "hedges": ["we guess", "probably", "it could be that", "we are not sure but", "arguably", "in a way"],
        "openers": ["Now,", "Right, so", "Basically,", "Alright,"],
        "nouns": {"results": "numbers", "model": "thingy", "data": "bunch of data"},
    },
}
CONTRACTIONS = [("do not", "don't"), ("does not", "doesn't"), ("is not", "isn't"), ("are not", "aren't"),
                ("can not", "can't"), ("cannot", "can't"), ("we are", "we're"), ("it is", "it's"),
                ("we will", "we'll"), ("we have", "we've"), ("that is", "that's"), ("there is", "there's")]
INFORMAL_SUBJECT = [(r"\bWe\b", "We kinda"), (r"\bwe\b", "we kinda"), (r"\bmany\b", "a lot of"),
                    (r"\bvery\b", "super"), (r"\bhowever\b", "but yeah"), (r"\bHowever\b", "But yeah")]

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_WORD = re.compile(r"\b[A-Za-z]{4,}\b")


def _rng(text: str, kind: str, lexicon: str) -> random.Random:
    return random.Random(int(hashlib.blake2b(f"{kind}|{lexicon}|{text}".encode(), digest_size=8).hexdigest(), 16))


def _swap_letters(text: str, rng: random.Random, share: float = 0.125) -> str:
    def swap(m: re.Match) -> str:
        w = m.group(0)
        if rng.random() >= share:
            return w
        i = rng.randrange(1, len(w) - 2)  # keep the first and last letters: a typist's transposition
        return w[:i] + w[i + 1] + w[i] + w[i + 2:]

    return _WORD.sub(swap, text)


def _before_clauses(text: str, words: list[str], rng: random.Random, share: float) -> str:
    """Insert a word from `words` before about `share` of the sentences and of the clauses after a comma."""
    out = []
    for part in re.split(r"(?<=[.,;])(\s+)", text):
        if part.strip() and not part.isspace() and rng.random() < share:
            w = rng.choice(words)
            if part[:1].isupper() and not part[:2].isupper():
                part = w[:1].upper() + w[1:] + " " + part[:1].lower() + part[1:]
            else:
                part = w + " " + part
        out.append(part)
    return "".join(out)


def degrade(text: str, kind: str, lexicon: str = "train") -> str:
    """A degraded version of `text` (see the module's docstring); raises KeyError on an unknown kind."""
    rng = _rng(text, kind, lexicon)
    lex = LEXICONS[lexicon]
    if kind == "typos":
        return _swap_letters(text, rng)
    if kind == "fillers":
        return _before_clauses(text, lex["fillers"], rng, 0.35)
    if kind == "hedging":
        return _before_clauses(text, lex["hedges"], rng, 0.5)
    if kind == "lowercase":
        return text.lower()
    if kind == "informal":
        out = text
        for formal, informal in CONTRACTIONS:
            out = re.sub(rf"\b{formal}\b", informal, out)
            out = re.sub(rf"\b{formal.capitalize()}\b", informal.capitalize(), out)
        for pattern, repl in INFORMAL_SUBJECT:
            out = re.sub(pattern, repl, out)
        for noun, repl in lex["nouns"].items():
            out = re.sub(rf"\b{noun}\b", repl, out)
        sentences = _SENTENCE.split(out)
        chosen = [i for i in range(len(sentences)) if rng.random() < 0.3] or [0]  # one opener at least
        return " ".join(rng.choice(lex["openers"]) + " " + s[:1].lower() + s[1:] if i in chosen else s
                        for i, s in enumerate(sentences))
    if kind == "combined":  # issue 34's degraded abstracts
        out = _before_clauses(text, ["basically", "kind of"], rng, 0.35)
        out = re.sub(r"\b[Ww]e\b", "we kinda", out, count=2)
        return _swap_letters(out, rng, 0.1).lower()
    raise KeyError(kind)
