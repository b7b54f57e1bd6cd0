"""Plain text from the HTML and LaTeX that proceedings sites leave in titles and abstracts.

`<i>word</i>`, `H<sub>2</sub>O`, `&amp;`, `$\\alpha$-divergence`, `\\emph{not}` and IEEE's trailing
`<ETX ...>&gt;</ETX>` become `word`, `H2O`, `&`, `α-divergence`, `not` and nothing. Dollar signs that
do not enclose math (`costs $5 to $10`) are left alone. Whitespace is collapsed as `records.clean_text`
does, so the result can be compared and embedded as it is.
"""

from __future__ import annotations

import html
import re
import unicodedata

from .records import clean_text

_IEEE_TAIL = re.compile(r"<*\s*<ETX\b[^>]*>.*?</ETX>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:_-]*(?:\s[^<>]*)?/?>")
_MATH_ALPHANUMERIC = re.compile("[\U0001D400-\U0001D7FF]")  # 𝛼, 𝐱, 𝔼: styled copies of plain letters
_MATH = re.compile(r"(?<![\\$])\$(?!\$)([^$]{1,200}?)(?<!\\)\$(?!\$)|\$\$([^$]{1,300}?)\$\$|\\\((.{1,200}?)\\\)")
_MATHY = re.compile(r"[\\^_{}]|^\S{1,24}$")
_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "ell": "ℓ", "infty": "∞", "le": "≤",
    "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "sim": "~", "times": "×",
    "cdot": "·", "pm": "±", "to": "→", "rightarrow": "→", "leftarrow": "←", "in": "∈", "sqrt": "√",
    "sum": "Σ", "prod": "Π", "partial": "∂", "nabla": "∇", "forall": "∀", "exists": "∃", "log": "log",
    "ldots": "...", "dots": "...", "cdots": "...", "%": "%", "&": "&", "_": "_", "#": "#", "$": "$",
}
_ACCENTS = {"'": "\u0301", "`": "\u0300", '"': "\u0308", "^": "\u0302", "~": "\u0303", "c": "\u0327", "v": "\u030c",
            "=": "\u0304", "u": "\u0306", "H": "\u030b", ".": "\u0307"}
_ACCENT = re.compile(r"\\(['`\"^~=.]|[cvuH](?=[{\s]))\s*\{?\s*\\?([A-Za-z])\}?")
_WRAPPER = re.compile(r"\\(?:emph|textit|textbf|textrm|textsf|texttt|textsc|text|mathrm|mathbf|mathit|mathsf|mathtt|"
                      r"mathcal|mathbb|mathfrak|boldsymbol|bm|operatorname|underline|overline|hat|tilde|bar|vec|mbox)"
                      r"\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+|[%&_#$])\s?")
_FONT_SWITCH = re.compile(r"\{\\(?:em|it|bf|sc|tt|rm)\s+([^{}]*)\}|\\(?:em|it|bf|sc|tt|rm)\b\s*")


def clean_markup(text: str | None) -> str:
    """`text` without HTML tags, entities and LaTeX markup, whitespace collapsed; '' for None."""
    if not text:
        return ""
    text = _IEEE_TAIL.sub("", text)
    for _ in range(2):  # double-escaped sources ("&amp;lt;i&amp;gt;") need two rounds
        text = _TAG.sub("", html.unescape(text))
    text = _MATH.sub(_math, text)
    text = _latex(text)
    text = _MATH_ALPHANUMERIC.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
    return clean_text(text)


_ESCAPED_BRACE = re.compile(r"\\[{}]")
_BRACE = re.compile(r"[{}]")


def clean_title(text: str | None) -> str:
    """`clean_markup` for a title, less what BibTeX-minded sources leave in one: case-protecting braces
    (`Hidden {M}arkov Models`, `{PF}^2ES`, an unbalanced `P{ólya`) and escaped ones (`Rates\\{via`)."""
    text = clean_markup(text)
    if "{" not in text and "}" not in text:
        return text
    return clean_text(_BRACE.sub("", _ESCAPED_BRACE.sub(" ", text)))


def _math(match: re.Match[str]) -> str:
    body = next(group for group in match.groups() if group is not None)
    if not _MATHY.search(body.strip()):
        return match.group(0)  # "$5 to $10": not math
    return _latex(body).replace("{", "").replace("}", "")


def _latex(text: str) -> str:
    if "\\" not in text:
        return text
    text = _ACCENT.sub(lambda m: unicodedata.normalize("NFC", m.group(2) + _ACCENTS[m.group(1)]), text)
    text = _FONT_SWITCH.sub(lambda m: m.group(1) or "", text)
    for _ in range(3):  # nested wrappers: \textbf{\emph{x}}
        text, count = _WRAPPER.subn(r"\1", text)
        if not count:
            break
    text = text.replace("\\\\", " ")
    return _COMMAND.sub(lambda m: _SYMBOLS.get(m.group(1), m.group(1)) + (" " if m.group(0).endswith(" ") else ""), text)
