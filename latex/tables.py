"""What the LaTeX parser knows about commands and environments, and the user's LTeX-style tables.

Users extend these tables the way LTeX+ users do with `ltex.latex.commands` and
`ltex.latex.environments`::

    commands     = {"\\mycommand{}": "ignore", "\\foo[]{}{}": "dummy", "\\keep{}": "default"}
    environments = {"myenv": "ignore"}

Command actions: "ignore" drops the command and its arguments; "dummy" (also LTeX's
"pluralDummy" / "vowelDummy") replaces it by the placeholder word `DUMMY`; "default" keeps the
text of its last mandatory argument.  Environment actions: "ignore" drops the environment;
"default" reads its content as prose.  A command the tables do not know keeps the text of the
braced groups that follow it (LTeX's default); one without braces is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from pylatexenc import latexwalker
from pylatexenc.latexwalker import get_default_latex_context_db
from pylatexenc.macrospec import (
    EnvironmentSpec,
    LatexContextDb,
    MacroSpec,
    MacroStandardArgsParser,
    ParsedMacroArgs,
    ParsedVerbatimArgs,
)

from .macros import EnvDef, MacroDef, definition_specs, machinery, match_brace, match_bracket, note_macros, storing

# Placeholder words that stand in for non-prose material, so sentences stay readable.
MATH = "[math]"
CITE = "[cite]"
REF = "[ref]"
URL = "[url]"
CODE = "[code]"
DUMMY = "[dummy]"
PLACEHOLDERS = (MATH, CITE, REF, URL, CODE, DUMMY)

COMMAND_ACTIONS = frozenset({"ignore", "dummy", "default", "pluralDummy", "vowelDummy"})
ENVIRONMENT_ACTIONS = frozenset({"ignore", "default"})

# --- commands -----------------------------------------------------------------------------

# Sectioning commands and their depth; `Chunk.section` follows the shallowest level in use
# (normally \section), so a \paragraph{} heading inside "Related Work" stays in Related Work.
SECTION_LEVELS = {"part": 2, "chapter": 2, "section": 2, "subsection": 3, "subsubsection": 4,
                  "paragraph": 5, "subparagraph": 6}
SECTION_COMMANDS = frozenset(SECTION_LEVELS)
CITE_COMMANDS = frozenset(
    """cite citet citep citealt citealp citeauthor citefullauthor citeyear citeyearpar Citet
    Citep Citealt Citealp Citeauthor citenum citetalias citepalias citeposs Citeposs parencite
    Parencite textcite Textcite autocite Autocite footcite footcitetext smartcite Smartcite
    supercite fullcite citeurl citetitle citedate citeA shortcite shortciteA""".split()
)
NOCITE_COMMANDS = frozenset({"nocite"})
REF_COMMANDS = frozenset(
    """ref eqref autoref Autoref cref Cref pageref nameref vref Vref cpageref Cpageref labelcref
    crefrange Crefrange cpagerefrange subref fref Fref thefigure thetable thesection thesubsection
    theequation thepage thechapter thealgorithm""".split()
)
URL_COMMANDS = frozenset({"url", "nolinkurl", "path"})
FOOTNOTE_COMMANDS = frozenset({"footnote", "footnotetext", "tablefootnote"})
CAPTION_COMMANDS = frozenset({"caption", "captionof", "subcaption", "subcaptionbox", "sidecaption"})
INCLUDE_COMMANDS = frozenset({"input", "include", "subfile", "import", "subimport", "inputfrom", "subinputfrom", "includefrom", "subincludefrom",
                              "loadglsentries"})  # glossaries' file of \newacronym definitions
BIB_COMMANDS = frozenset({"bibliography", "addbibresource", "addglobalbib", "addsectionbib"})
KEEP_LAST_COMMANDS = frozenset({"href", "textcolor", "colorbox", "fcolorbox", "texorpdfstring", "hyperref", "hyperlink", "foreignlanguage", "resizebox", "scalebox", "raisebox", "hypertarget"})
# glossaries/acronym commands: name -> (form, case, plural); `\\gls` reads the short form (first-use
# expansion is not tracked: it would tie every paragraph to all before it)
GLOSSARY_COMMANDS = {
    **{name: ("short", "", False) for name in ("gls", "ac", "acs", "acrshort", "glsentryshort", "glsxtrshort", "glstext",
                                                "acsu")},
    **{name: ("short", "cap", False) for name in ("Gls", "Ac", "Acs", "Acrshort", "Glstext")},
    **{name: ("short", "", True) for name in ("glspl", "acp", "acsp", "acrshortpl", "glsplural")},
    **{name: ("short", "cap", True) for name in ("Glspl", "Acp", "Acsp", "Glsplural")},
    "GLS": ("short", "upper", False), "GLSpl": ("short", "upper", True),
    **{name: ("long", "", False) for name in ("acrlong", "acl", "glsentrylong", "glsxtrlong", "aclu")},
    **{name: ("long", "cap", False) for name in ("Acrlong", "Acl", "Aclu")},
    **{name: ("long", "", True) for name in ("acrlongpl", "aclp")},
    **{name: ("long", "cap", True) for name in ("Acrlongpl", "Aclp")},
    **{name: ("full", "", False) for name in ("acrfull", "acf", "glsxtrfull", "glsfirst", "acfi")},
    **{name: ("full", "cap", False) for name in ("Acrfull", "Acf", "Glsfirst", "Acfi")},
    **{name: ("full", "", True) for name in ("acrfullpl", "acfp")},
    **{name: ("full", "cap", True) for name in ("Acrfullpl", "Acfp")},
}

# siunitx: name -> (argspec, its mandatory arguments: v a value, u the unit, a an angle)
QUANTITY_COMMANDS = {
    "num": ("[{", "v"), "si": ("[{", "u"), "unit": ("[{", "u"), "SI": ("[{[{", "vu"), "qty": ("[{{", "vu"),
    "numrange": ("[{{", "vv"), "SIrange": ("[{{{", "vvu"), "qtyrange": ("[{{{", "vvu"), "ang": ("[{", "a"),
    "numlist": ("[{", "v"), "SIlist": ("[{{", "vu"), "qtylist": ("[{{", "vu"), "numproduct": ("[{", "v"),
}
_SI_PREFIXES = {"yocto": "y", "zepto": "z", "atto": "a", "femto": "f", "pico": "p", "nano": "n", "micro": "\u00b5",
                "milli": "m", "centi": "c", "deci": "d", "deca": "da", "deka": "da", "hecto": "h", "kilo": "k",
                "mega": "M", "giga": "G", "tera": "T", "peta": "P", "exa": "E", "zetta": "Z", "yotta": "Y",
                "kibi": "Ki", "mebi": "Mi", "gibi": "Gi", "tebi": "Ti"}
_SI_UNITS = {"percent": "%", "degree": "\u00b0", "degreeCelsius": "\u00b0C", "celsius": "\u00b0C", "second": "s",
             "minute": "min", "hour": "h", "day": "d", "metre": "m", "meter": "m", "gram": "g", "kilogram": "kg",
             "litre": "L", "liter": "L", "byte": "B", "bit": "bit", "hertz": "Hz", "watt": "W", "joule": "J",
             "volt": "V", "ampere": "A", "ohm": "\u03a9", "kelvin": "K", "newton": "N", "pascal": "Pa",
             "decibel": "dB", "mole": "mol", "candela": "cd", "radian": "rad", "arcminute": "\u2032",
             "arcsecond": "\u2033", "electronvolt": "eV", "tonne": "t", "bar": "bar", "flop": "FLOP"}
_SI_POWERS = {"squared": "\u00b2", "cubed": "\u00b3"}
_SI_TOKEN = re.compile(r"\\([a-zA-Z]+)|([^\\{}\s~]+)|\{([^{}]*)\}")


def si_unit(raw: str) -> str:
    """The printed form of a siunitx unit (`\\kilo\\gram\\per\\second\\squared` -> "kg/s\u00b2")."""
    out, pending, power = "", "", ""
    for m in _SI_TOKEN.finditer(raw):
        name, literal, group = m.groups()
        if name in _SI_PREFIXES:
            pending += _SI_PREFIXES[name]
        elif name == "per":
            out += "/"
        elif name in ("square", "cubic"):
            power = _SI_POWERS["squared" if name == "square" else "cubed"]
        elif name in _SI_POWERS:
            out += _SI_POWERS[name]
        elif name in ("tothe", "raiseto"):  # its braced power follows as a literal
            continue
        elif name is not None or literal is not None or group is not None:
            unit = _SI_UNITS.get(name, name or "") if name is not None else (literal or group or "")
            sep = "" if not out or out.endswith("/") else "\u00b7" if name is not None else ""
            out += sep + pending + unit + power
            pending, power = "", ""
    return out


def si_value(raw: str) -> str:
    """The printed form of a siunitx number (`1.2+-0.1` -> "1.2\u00b10.1", `1e3` kept)."""
    return " ".join(raw.replace("+-", "\u00b1").split()).replace("\\pm", "\u00b1").replace("$", "")


# TeX spacing primitives whose argument is a bare dimension (`\\vskip 0.3in`), and TeX parameters
# set in the text (`\\looseness-1`, `\\emergencystretch=3em`): dropped with their value.
DIMEN_COMMANDS = frozenset({"vskip", "hskip", "kern", "mskip", "mkern", "hglue", "vglue"}) | frozenset(
    """looseness tolerance pretolerance emergencystretch hbadness vbadness hfuzz vfuzz linepenalty
    hyphenpenalty exhyphenpenalty clubpenalty widowpenalty displaywidowpenalty interlinepenalty
    brokenpenalty binoppenalty relpenalty predisplaypenalty postdisplaypenalty floatingpenalty
    finalhyphendemerits doublehyphendemerits adjdemerits parindent parskip baselineskip lineskip
    lineskiplimit abovedisplayskip belowdisplayskip abovedisplayshortskip belowdisplayshortskip
    textfloatsep floatsep intextsep dbltextfloatsep dblfloatsep abovecaptionskip belowcaptionskip
    columnsep tabcolsep arraycolsep itemsep topsep parsep partopsep leftmargin rightmargin labelsep
    labelwidth itemindent fboxsep fboxrule jot mathsurround hangindent hangafter spaceskip xspaceskip
    leftskip rightskip parfillskip""".split())
# Title commands of venue styles: the paper's title.  Author lists and affiliations are dropped.
TITLE_COMMANDS = frozenset({"title", "icmltitle"})
SPACE_COMMANDS = frozenset({"\\", "newline", "linebreak", ",", ";", ":", ">", " ", "quad", "qquad", "enspace", "thinspace", "space", "hfill", "cr", "and", "And", "AND"})
PAR_COMMANDS = frozenset({"par", "bigskip", "medskip", "smallskip", "newpage", "clearpage", "cleardoublepage", "pagebreak", "maketitle", "maketitlesupplementary"})

# Commands whose arguments are not prose: dropped with their arguments.
IGNORE_COMMANDS = frozenset(
    """documentclass usepackage RequirePackage selectlanguage setlength addlength setcounter
    addtocounter addcounter stepcounter refstepcounter newcounter newcommand renewcommand
    providecommand DeclareRobustCommand newenvironment renewenvironment provideenvironment
    DeclareMathOperator newtheorem theoremstyle newif def gdef edef xdef let hspace vspace
    label includegraphics includepdf hypersetup definecolor providecolor colorlet color
    pagecolor bibliographystyle printbibliography author date thanks affiliation affil
    institute email address orcid keywords maketitle tableofcontents listoffigures listoftables
    pagestyle thispagestyle pagenumbering vphantom hphantom phantom rule fontsize
    settowidth settoheight newlength captionsetup graphicspath lstset lstinputlisting
    inputminted mintinline usetikzlibrary tikzset pgfplotsset DeclareGraphicsExtensions
    geometry bibitem nocite appendix linenumbers acmConference acmYear acmDOI acmISBN
    acmPrice acmBooktitle acmJournal acmVolume acmNumber acmArticle acmMonth setcopyright
    copyrightyear ccsdesc received renewcaptionname addto crefname Crefname newacronym
    newglossaryentry iclrfinalcopy aclfinalcopy icmltitlerunning icmlsetsymbol icmlaffiliation
    icmlcorrespondingauthor icmlkeywords printAffiliationsAndNotice icmlauthor icmlEqualContribution
    glsunset glsreset glsresetall glsunsetall glsdisablehyper makeglossaries printglossaries
    printglossary acresetall acreset setstretch linespread acused ifx acro acrodef newacro DeclareAcronym setacronymstyle
    vfill enlargethispage noindent centering raggedright raggedleft footnotemark
    textsuperscript textsubscript marginpar todo counterwithin counterwithout numberwithin
    addcontentsline addtocontents crefalias crefformat Crefformat creflabelformat crefrangeformat
    editor ShortHeadings firstpageno jmlrheading affiliations tikz pyc pyb
    authornote authornotemark additionalaffiliation institution department city state country
    postcode streetaddress position authorsaddresses shortauthors titlenote subtitlenote subtitle
    acmSubmissionID settopmatter acmBadgeL acmBadgeR acmBadge keywordsname terms category
    IEEEauthorblockN IEEEauthorblockA IEEEmembership IEEEpeerreviewmaketitle IEEEoverridecommandlockouts
    IEEEaftertitletext markboth authorrunning titlerunning inst orcidID email
    floatsetup sisetup setkeys tcbset pgfkeys mdfsetup setlist titleformat titlespacing restylefloat
    floatstyle newfloatcommand sethlcolor blfootnotemark""".split()
)
# Author and affiliation notes of the title block (`\\icmlEqualContribution` is one, the NeurIPS/ICLR
# `\\thanks` another): footnotes saying who the authors are, not what the paper says.  A footnote
# before the paper's first heading and abstract (set under the title), or one that says any of
# these, is left out.
AUTHOR_NOTE = re.compile(
    r"\b(?:contributed equally|equal(?:ly)? contribut\w*|equal advising|corresponding authors?|correspondence to"
    r"|work (?:was )?(?:done|performed|conducted) (?:while|during|as)|these authors|joint first|co-first"
    r"|listed in (?:random|alphabetical) order|randomly ordered)\b", re.I)
# Unknown commands named like settings (`\\floatsetup[table]{capposition=top}`, `\\tcbset{...}`) are
# dropped with their arguments.
SETUP_NAME = re.compile(r"[a-zA-Z]*setup|tcbset|lstset|tikzset|pgfplotsset|setkeys|pgfkeys|pgfqkeys")
# pythontex commands that typeset code or its printed value: a placeholder for the whole command.
CODE_COMMANDS = frozenset({"py", "pys", "pyv"})

# Commands that stand for text.
TEXT_COMMANDS: dict[str, str] = {
    "LaTeX": "LaTeX", "TeX": "TeX", "LaTeXe": "LaTeX2e", "BibTeX": "BibTeX", "XeTeX": "XeTeX",
    "XeLaTeX": "XeLaTeX", "LuaTeX": "LuaTeX", "LuaLaTeX": "LuaLaTeX", "pdfLaTeX": "pdfLaTeX",
    "ldots": "...", "dots": "...", "textellipsis": "...",
    "%": "%", "&": "&", "$": "$", "#": "#", "_": "_", "{": "{", "}": "}",
    "textbackslash": "\\", "textasciitilde": "~", "textasciicircum": "^", "textunderscore": "_",
    "textbar": "|", "textless": "<", "textgreater": ">", "slash": "/",
    "textquotedblleft": '"', "textquotedblright": '"', "textquoteleft": "'", "textquoteright": "'",
    "textendash": "\u2013", "textemdash": "\u2014", "textbullet": "\u2022",
    "S": "\u00a7", "P": "\u00b6", "dag": "\u2020", "ddag": "\u2021", "textdagger": "\u2020",
    "textdaggerdbl": "\u2021", "copyright": "\u00a9", "textcopyright": "\u00a9",
    "textregistered": "\u00ae", "texttrademark": "\u2122", "textdegree": "\u00b0",
    "pounds": "\u00a3", "textsterling": "\u00a3", "euro": "\u20ac", "texteuro": "\u20ac",
    "ss": "\u00df", "SS": "SS", "o": "\u00f8", "O": "\u00d8", "aa": "\u00e5", "AA": "\u00c5",
    "ae": "\u00e6", "AE": "\u00c6", "oe": "\u0153", "OE": "\u0152", "l": "\u0142", "L": "\u0141",
    "i": "\u0131", "j": "\u0237", "dh": "\u00f0", "DH": "\u00d0", "th": "\u00fe", "TH": "\u00de",
    "ng": "\u014b", "NG": "\u014a",
    # Abbreviation macros that most CV/ML templates define (\eg, \ie, \etal ...).
    "eg": "e.g.", "Eg": "E.g.", "ie": "i.e.", "Ie": "I.e.", "etal": "et al.", "cf": "cf.",
    "Cf": "Cf.", "etc": "etc.", "vs": "vs.", "wrt": "w.r.t.", "aka": "a.k.a.", "iid": "i.i.d.",
}
# Commands that produce nothing but must not glue words together either.
EMPTY_COMMANDS = frozenset({"@", "/", "-", "!", "xspace", "relax", "protect", "nobreak", "allowbreak", "ignorespaces", "unskip"})

ACCENTS: dict[str, str] = {
    "'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a", "d": "\u0323", "b": "\u0331", "t": "\u0361",
}

SPECIALS: dict[str, str] = {
    "~": " ", "``": '"', "''": '"', "--": "\u2013", "---": "\u2014", "&": " ",
    "!`": "\u00a1", "?`": "\u00bf",
}

# --- environments -------------------------------------------------------------------------

MATH_ENVIRONMENTS = frozenset(
    """equation equation* align align* alignat alignat* gather gather* flalign flalign* multline
    multline* eqnarray eqnarray* split math displaymath dmath dmath* dgroup dgroup* darray
    subequations""".split()
)
# Floats: only their captions are prose.
FLOAT_ENVIRONMENTS = frozenset(
    """figure figure* table table* wrapfigure wraptable subfigure subtable algorithm algorithm*
    sidewaysfigure sidewaystable SCfigure SCtable longtable longtable* listing floatrow
    subfloat teaserfigure marginfigure margintable""".split()
)
# Dropped outright (their contents are not LaTeX prose).
DROP_ENVIRONMENTS = frozenset(
    """tabular tabular* tabularx tabulary tabu longtabu NiceTabular tblr array verbatim
    verbatim* Verbatim BVerbatim LVerbatim lstlisting minted comment filecontents filecontents*
    thebibliography tikzpicture pgfpicture picture axis algorithmic algorithmic* algorithm2e
    keywords IEEEkeywords CCSXML titlepage alltt spverbatim icmlauthorlist pycode pyblock pyverbatim
    pyconsole pysub pyconcode""".split()
)
# Environments whose contents are not LaTeX at all; the block splitter blanks them out.
VERBATIM_ENVIRONMENTS = frozenset(
    """verbatim verbatim* Verbatim BVerbatim LVerbatim lstlisting minted comment filecontents
    filecontents* spverbatim pycode pyblock pyverbatim pyconsole pysub pyconcode""".split()
)
LIST_ENVIRONMENTS = frozenset(
    """itemize enumerate description compactitem compactenum compactdesc inparaenum
    asparaenum asparaitem itemize* enumerate* description*""".split()
)
# Environments that wrap the whole body; blank lines inside them still split blocks.
WRAPPER_ENVIRONMENTS = frozenset(
    """document multicols multicols* appendices subappendices onecolumn twocolumn landscape
    sloppypar spacing singlespace onehalfspace doublespace CJK CJK* otherlanguage
    otherlanguage* linenumbers""".split()
)

_ENV_ARGS = {
    "minipage": "[[[{", "multicols": "{[[", "multicols*": "{[[", "wrapfigure": "[{[{",
    "wraptable": "[{[{", "subfigure": "[[[{", "subtable": "[[[{", "algorithm": "[",
    "algorithm*": "[", "tabularx": "{[{", "tabulary": "{[{", "longtable": "[{",
    "minted": "[{", "lstlisting": "[", "tcolorbox": "[", "spacing": "{", "otherlanguage": "{",
    "CJK": "{{", "CJK*": "{{", "itemize": "[", "enumerate": "[", "description": "[",
    "quote": "", "quotation": "", "center": "", "sidewaysfigure": "[", "sidewaystable": "[",
    "SCfigure": "[[", "theorem": "[", "lemma": "[", "definition": "[", "proof": "[",
}

_MACRO_ARGS = {
    "paragraph": "*[{", "subparagraph": "*[{", "part": "*[{", "caption": "[{",
    "captionof": "*{[{", "subcaption": "[{", "subcaptionbox": "*[{[[[{", "sidecaption": "[{",
    "footnote": "[{", "footnotetext": "[{", "tablefootnote": "[{", "footnotemark": "[",
    "thanks": "{", "abstract": "{", "hyperref": "[{", "hyperlink": "{{",
    "subfile": "{", "loadglsentries": "[{", "import": "*{{", "subimport": "*{{", "inputfrom": "{{", "subinputfrom": "{{",
    "includefrom": "{{", "subincludefrom": "{{", "addbibresource": "[{", "addglobalbib": "[{",
    "addsectionbib": "[{", "bibliographystyle": "{", "printbibliography": "[",
    "newtheorem": "*{[{[", "theoremstyle": "{", "includepdf": "[{",
    "affiliation": "[{", "affil": "[{", "institute": "{", "email": "{", "orcid": "{",
    "address": "{", "captionsetup": "[{", "graphicspath": "{", "lstset": "{",
    "lstinputlisting": "[{", "inputminted": "[{{", "usetikzlibrary": "{", "tikzset": "{",
    "pgfplotsset": "{", "settowidth": "{{", "settoheight": "{{", "newlength": "{",
    "stepcounter": "{", "refstepcounter": "{", "newcounter": "{[", "addtocounter": "{{",
    "fontsize": "{{", "pagestyle": "{", "thispagestyle": "{",
    "pagenumbering": "{", "phantom": "{", "rule": "[{{", "textsuperscript": "{",
    "textsubscript": "{", "marginpar": "[{", "todo": "[{", "foreignlanguage": "[{{",
    "resizebox": "*{{{", "scalebox": "{[{", "raisebox": "{[[{", "geometry": "{",
    "bibitem": "[{", "nocite": "{", "crefrange": "*{{", "Crefrange": "*{{",
    "cpagerefrange": "*{{", "pageref": "*{", "nameref": "*{", "vref": "*{", "Vref": "*{",
    "cpageref": "*{", "Cpageref": "*{", "labelcref": "{", "subref": "*{", "ref": "*{",
    "autoref": "*{", "Autoref": "{", "fref": "{", "Fref": "{", "eqref": "{", "cref": "*{",
    "Cref": "*{", "renewcaptionname": "{{{", "addto": "{{", "crefname": "{{{",
    "Crefname": "{{{", "newacronym": "[{{{", "newglossaryentry": "{{", "acmConference": "[{{{",
    "acmBooktitle": "{", "acmDOI": "{", "acmISBN": "{", "acmYear": "{", "acmPrice": "{",
    "acmJournal": "{", "acmVolume": "{", "acmNumber": "{", "acmArticle": "{", "acmMonth": "{",
    "setcopyright": "{", "copyrightyear": "{", "ccsdesc": "[{", "received": "[{",
    "icmltitlerunning": "{", "icmlsetsymbol": "{{", "icmlaffiliation": "{{",
    "icmlcorrespondingauthor": "{{", "icmlkeywords": "{", "printAffiliationsAndNotice": "{",
    "icmlauthor": "{{", "icmltitle": "{", "twocolumn": "[", "glsunset": "{", "glsreset": "{", "acreset": "{", "acused": "{",
    "setacronymstyle": "{", "setstretch": "{", "linespread": "{",
    "printglossary": "[", **{name: "[{[" for name in GLOSSARY_COMMANDS},
    "textcolor": "[{{", "colorbox": "[{{", "fcolorbox": "[{[{{", "texorpdfstring": "{{",
    "title": "[{", "author": "[{", "keywords": "{", "enlargethispage": "*{",
    "DeclareGraphicsExtensions": "{", "counterwithin": "*{{", "counterwithout": "*{{", "numberwithin": "[{{",
    "addcontentsline": "{{{", "addtocontents": "{{", "crefalias": "{{", "crefformat": "{{", "Crefformat": "{{",
    "creflabelformat": "{{", "crefrangeformat": "{{", "editor": "{", "ShortHeadings": "{{", "firstpageno": "{",
    "jmlrheading": "{{{{{{{", "affiliations": "{", "hypertarget": "{{",
    "authornote": "{", "authornotemark": "[", "additionalaffiliation": "{", "institution": "{",
    "department": "[{", "city": "{", "state": "{", "country": "{", "postcode": "{", "streetaddress": "{",
    "position": "{", "authorsaddresses": "{", "shortauthors": "", "titlenote": "{", "subtitlenote": "{",
    "subtitle": "{", "acmSubmissionID": "{", "settopmatter": "{", "acmBadgeL": "[{", "acmBadgeR": "[{",
    "acmBadge": "[{", "terms": "{", "category": "{{{[", "IEEEauthorblockN": "{", "IEEEauthorblockA": "{",
    "IEEEmembership": "{", "IEEEaftertitletext": "{", "markboth": "{{", "authorrunning": "{", "titlerunning": "{",
    "inst": "{", "orcidID": "{", "floatsetup": "[{", "sisetup": "{", "setkeys": "{{", "tcbset": "{",
    "pgfkeys": "{", "mdfsetup": "{", "setlist": "[{", "titleformat": "*{[{{{{[", "titlespacing": "*{{{{[",
    "restylefloat": "*{", "floatstyle": "{", "newfloatcommand": "{{[[", "sethlcolor": "{",
    **{name: spec for name, (spec, _) in QUANTITY_COMMANDS.items()},
}


# Commands whose `*` is not a starred form: a `*` after them is text.
_NO_STAR = frozenset({"twocolumn", "shortauthors"})


def starred(spec: str, name: str = "") -> str:
    """The argument spec that also reads a starred form (`\\gls*{x}` as `\\gls{x}`): every command the
    tables know takes an optional star, as LaTeX's starred variants (glossaries' "no hyperlink",
    `\\section*`, cleveref's `\\cref*`) print the same words."""
    return spec if spec.startswith("*") or name in _NO_STAR else "*" + spec


_UNIT = r"(?:\s*(?:true)?(?:pt|pc|in|bp|cm|mm|dd|cc|sp|em|ex|mu|fil{1,3})\b|[ \t]*\\[a-zA-Z@]+)"
_ONE_DIMEN = r"\s*=?\s*[-+]?\s*(?:(?:\d+(?:[.,]\d*)?|[.,]\d+)" + _UNIT + r"|\\[a-zA-Z@]+)"
_DIMEN = re.compile(_ONE_DIMEN + r"(?:\s*(?:plus|minus|\\@plus|\\@minus)" + _ONE_DIMEN + r")*"
                    r"|\s*=?\s*[-+]?\s*\d+(?![.,\d])|")  # an integer parameter's value (`\\looseness-1`); or nothing


_TOKEN = re.compile(r"\s*(?:\\[a-zA-Z@]+|\\.|[^\s\\{}%]|\{[^{}]*\})")
_INTEGER = re.compile(r"\s*=?\s*[-+]?\s*\d+|")
# TeX parameters whose value is an integer: `\\hbadness=10000\n\\bibliography{main}` is not a length
# "10000\\bibliography"
INTEGER_PARAMETERS = frozenset(
    """looseness tolerance pretolerance hbadness vbadness linepenalty hyphenpenalty exhyphenpenalty
    clubpenalty widowpenalty displaywidowpenalty interlinepenalty brokenpenalty binoppenalty relpenalty
    predisplaypenalty postdisplaypenalty floatingpenalty finalhyphendemerits doublehyphendemerits
    adjdemerits hangafter""".split())


def _tikz_end(s: str, p: int) -> int:
    """End of an inline `\\tikz` picture starting at p: its options, then a braced picture or the
    path up to its `;` (not past a blank line)."""
    n = len(s)
    while p < n and s[p] in " \t":
        p += 1
    if p < n and s[p] == "[":
        p = min(match_bracket(s, p) + 1, n)
    while p < n and s[p] in " \t\r\n":
        p += 1
    if p < n and s[p] == "{":
        return min(match_brace(s, p) + 1, n)
    stop = _PARAGRAPH_BREAK.search(s, p)
    stop = stop.start() if stop else n
    q = p
    while q < stop and s[q] != ";":
        q = match_brace(s, q) + 1 if s[q] == "{" else q + 1
    return min(q + 1, stop)


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


class _RawArgParser(MacroStandardArgsParser):
    """Reads an argument verbatim: `\\verb|...|` (mode "verb"), `\\url{...}` (mode "braced"),
    `\\href[opts]{url}{text}` (mode "href") or the TeX dimension of `\\vskip 0.3in plus 1fil`
    (mode "dimen", which is not prose).

    Unlike pylatexenc's own verbatim parser it never runs past the end of the input, and a
    `%` inside a URL is not a comment.
    """

    def __init__(self, mode: str, **kwargs):
        super().__init__(argspec="{", **kwargs)
        self.mode = mode

    def parse_args(self, w, pos, parsing_state=None):
        s, n = w.s, len(w.s)
        p = pos
        if self.mode == "href":  # \href[opts]{raw URL}{text}
            while p < n and s[p] in " \t":
                p += 1
            if p < n and s[p] == "[":
                close = s.find("]", p)
                p = close + 1 if close >= 0 else p
            while p < n and s[p] in " \t":
                p += 1
            if p >= n or s[p] != "{":
                return self._empty(w, pos, parsing_state)
            end = match_brace(s, p, comments=False)
            url = w.make_node(latexwalker.LatexCharsNode, parsing_state=parsing_state,
                              chars=s[p + 1:end], pos=p + 1, len=end - p - 1)
            stop = min(end + 1, n)
            text = None
            if stop < n:
                try:
                    text, tpos, tlen = w.get_latex_expression(stop, parsing_state=parsing_state)
                    stop = tpos + tlen
                except latexwalker.LatexWalkerError:
                    text = None
            if text is None:
                text = w.make_node(latexwalker.LatexCharsNode, parsing_state=parsing_state,
                                   chars="", pos=stop, len=0)
            return ParsedMacroArgs(argspec="{{", argnlist=[url, text]), pos, stop - pos
        if self.mode in ("dimen", "integer"):  # an integer parameter's value has no unit (`\\hbadness=10000`)
            m = (_INTEGER if self.mode == "integer" else _DIMEN).match(s, p)
            return self._node(w, p, m.end(), pos, m.end(), parsing_state, None)
        if self.mode == "tokens":  # \\ifx's two tokens (`\\ifx\\relax#1\\relax` in a macro body): compared, not printed
            end = p
            for _ in range(2):
                m = _TOKEN.match(s, end)
                if m is None:
                    break
                end = m.end()
                if s.startswith("{}", end):  # an argument marker's empty group
                    end += 2
            return self._node(w, p, end, pos, end, parsing_state, None)
        if self.mode == "tikz":  # \tikz[opts]{picture} or \tikz[opts] \draw ...;
            end = _tikz_end(s, p)
            return self._node(w, p, end, pos, end, parsing_state, None)
        if self.mode == "verb":
            if p < n and s[p] == "*":
                p += 1
            if p >= n or s[p].isspace() or s[p].isalpha():
                return self._empty(w, pos, parsing_state)
            delim = s[p]
            end = s.find(delim, p + 1)
            line_end = min((i for i in (s.find("\n", p), s.find("\r", p)) if i >= 0), default=n)
            if end < 0 or end > line_end:
                return self._empty(w, pos, parsing_state)
            return self._node(w, p + 1, end, pos, end + 1, parsing_state, (delim, delim))
        while p < n and s[p] in " \t":
            p += 1
        if p >= n or s[p] != "{":
            return self._empty(w, pos, parsing_state)
        end = match_brace(s, p, comments=False)
        return self._node(w, p + 1, end, pos, min(end + 1, n), parsing_state, ("{", "}"))

    def _empty(self, w, pos, parsing_state):
        return self._node(w, pos, pos, pos, pos, parsing_state, None)

    @staticmethod
    def _node(w, a, b, start, stop, parsing_state, delims):
        node = w.make_node(latexwalker.LatexCharsNode, parsing_state=parsing_state,
                           chars=w.s[a:b], pos=a, len=b - a)
        return ParsedVerbatimArgs(verbatim_chars_node=node, verbatim_delimiters=delims), start, stop - start


# --- user tables ----------------------------------------------------------------------------

_COMMAND_KEY = re.compile(r"^\\([a-zA-Z@]+\*?|.)((?:\[\]|\{\}|\(\))*)$")
_ENV_KEY = re.compile(r"^(?:\\begin\s*\{)?([^{}\\\s]+)\}?((?:\[\]|\{\}|\(\))*)$")


@dataclass(frozen=True)
class UserCommand:
    name: str
    argspec: str  # pylatexenc argspec: '{' mandatory, '[' optional
    action: str  # ignore | dummy | default


def parse_user_commands(commands: dict[str, str]) -> dict[str, UserCommand]:
    """Turn an LTeX-style `{"\\foo[]{}": "ignore"}` table into specs; bad entries raise ValueError."""
    out: dict[str, UserCommand] = {}
    for key, action in commands.items():
        m = _COMMAND_KEY.match(key.strip())
        if not m:
            raise ValueError(
                f"peerlint: command {key!r} in the LaTeX commands table is not a command "
                "prototype; write it like LTeX does, e.g. '\\\\mycommand[]{}' (a backslash, "
                "the name, then [] per optional and {} per mandatory argument)."
            )
        if action not in COMMAND_ACTIONS:
            raise ValueError(
                f"peerlint: action {action!r} for command {key!r} is unknown; use one of "
                f"{sorted(COMMAND_ACTIONS)}."
            )
        name = m.group(1)
        argspec = "".join("{" if a == "{}" else "[" for a in re.findall(r"\[\]|\{\}|\(\)", m.group(2)))
        if name.endswith("*") and len(name) > 1:
            name, argspec = name[:-1], "*" + argspec
        action = "dummy" if action in ("pluralDummy", "vowelDummy") else action
        old = out.get(name)
        if old is None or len(argspec) >= len(old.argspec):
            out[name] = UserCommand(name, argspec, action)
    return out


def parse_user_environments(environments: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, action in environments.items():
        m = _ENV_KEY.match(key.strip())
        if not m:
            raise ValueError(
                f"peerlint: environment {key!r} in the LaTeX environments table should be an "
                "environment name such as 'myenv' (or '\\\\begin{myenv}')."
            )
        if action not in ENVIRONMENT_ACTIONS:
            raise ValueError(
                f"peerlint: action {action!r} for environment {key!r} is unknown; use one of "
                f"{sorted(ENVIRONMENT_ACTIONS)}."
            )
        out[m.group(1)] = action
    return out


class _FlatContextDb(LatexContextDb):
    """pylatexenc's context with the category chain flattened into dicts.

    pylatexenc looks every token up category by category (`test_for_specials` alone was a third
    of the parse time); the lookups here give the same answers from one dict each.
    """

    def freeze(self) -> "_FlatContextDb":
        self._macros: dict = {}
        self._envs: dict = {}
        specials: dict = {}
        for cat in reversed(self.category_list):  # earlier categories win
            self._macros.update(self.d[cat]["macros"])
            self._envs.update(self.d[cat]["environments"])
            specials.update(self.d[cat]["specials"])
        self._specials = specials
        self._by_first: dict[str, list] = {}
        for chars in sorted(specials, key=len, reverse=True):  # longest match first
            self._by_first.setdefault(chars[:1], []).append((chars, specials[chars]))
        return self

    def get_macro_spec(self, macroname):
        spec = self._macros.get(macroname)
        if spec is None:
            if SETUP_NAME.fullmatch(macroname):
                spec = self._macros[macroname] = MacroSpec(macroname, "*[{")
            else:
                return self.unknown_macro_spec
        return spec

    def get_environment_spec(self, environmentname):
        return self._envs.get(environmentname, self.unknown_environment_spec)

    def get_specials_spec(self, specials_chars):
        return self._specials.get(specials_chars, self.unknown_specials_spec)

    def test_for_specials(self, s, pos, parsing_state=None):
        cands = self._by_first.get(s[pos:pos + 1])
        if cands:
            for chars, spec in cands:
                if s.startswith(chars, pos):
                    return spec
        return None


@dataclass(frozen=True)
class Tables:
    """Everything the walker consults, built once per distinct set of user options and definitions."""

    commands: dict[str, UserCommand]
    environments: dict[str, str]
    macros: dict[str, str]  # text macros from the settings: name (no backslash) -> replacement text
    context: object  # pylatexenc LatexContextDb
    definitions: dict[str, MacroDef] = field(default_factory=dict)  # the project's macros that expand
    env_definitions: dict[str, EnvDef] = field(default_factory=dict)
    notes: frozenset[str] = frozenset()  # user macros that are author notes: dropped with their arguments
    aliases: dict[str, str] = field(default_factory=dict)  # name -> the command it stands for
    cite_names: dict[str, str] = field(default_factory=dict)  # bib key -> authors' short name
    acronyms: dict = field(default_factory=dict)  # glossaries key -> macros.Acronym
    cite_years: dict[str, str] = field(default_factory=dict)  # bib key -> year
    cite_style: str = ""  # "acl": ACL's author-year styles, where \\cite reads "Smith et al. (2023)"
    stores: frozenset[str] = frozenset()  # package macros that only store their arguments: dropped with them
    templates: dict = field(default_factory=dict, compare=False, repr=False)  # parsed macro bodies


# Names the parser itself handles; a project's definition of one of them is not expanded (a
# `\\renewcommand{\\paragraph}` restyles a heading, it is still a heading).  Text commands and
# accents (`\\eg`, `\\c`) are the project's to redefine.
BUILTIN_COMMANDS = frozenset().union(
    SECTION_COMMANDS, CITE_COMMANDS, NOCITE_COMMANDS, REF_COMMANDS, URL_COMMANDS, FOOTNOTE_COMMANDS,
    CAPTION_COMMANDS, INCLUDE_COMMANDS, BIB_COMMANDS, KEEP_LAST_COMMANDS, SPACE_COMMANDS, PAR_COMMANDS,
    IGNORE_COMMANDS, EMPTY_COMMANDS, DIMEN_COMMANDS, TITLE_COMMANDS, GLOSSARY_COMMANDS, CODE_COMMANDS, QUANTITY_COMMANDS,
    {"abstract", "item", "verb", "lstinline", "begin", "end", "twocolumn"},
)
BUILTIN_ENVIRONMENTS = frozenset().union(
    MATH_ENVIRONMENTS, FLOAT_ENVIRONMENTS, DROP_ENVIRONMENTS, VERBATIM_ENVIRONMENTS, LIST_ENVIRONMENTS,
    WRAPPER_ENVIRONMENTS, {"abstract", "document"},
)


_KNOWN_TEXT = frozenset(TEXT_COMMANDS) | frozenset(ACCENTS)


@lru_cache(maxsize=32)
def build_tables(commands: tuple[tuple[str, str], ...], environments: tuple[tuple[str, str], ...],
                 macros: tuple[tuple[str, str], ...], definitions: tuple = ((), (), (), (), (), ("", ()))) -> Tables:
    """`definitions` is `Definitions.key()`: the project's macros, environments, aliases, cite names, acronyms."""
    user_cmds = parse_user_commands(dict(commands))
    user_envs = parse_user_environments(dict(environments))
    own = {name: d for name, d in definitions[0] if name not in BUILTIN_COMMANDS and name not in user_cmds}
    skip = machinery(own, _KNOWN_TEXT)
    defs = {name: d for name, d in own.items() if name not in skip}
    aliases = {a: b for a, b in definitions[2] if a not in BUILTIN_COMMANDS and a not in user_cmds and a != b}
    env_defs = {name: d for name, d in definitions[1] if name not in BUILTIN_ENVIRONMENTS and name not in user_envs}
    default = get_default_latex_context_db()
    db = _FlatContextDb()
    for cat in default.category_list:
        db.add_context_category(cat, macros=default.d[cat]["macros"].values(),
                                environments=default.d[cat]["environments"].values(),
                                specials=default.d[cat]["specials"].values())
    db.add_context_category(
        "peerlint-definitions", prepend=True,
        macros=[MacroSpec(d.name, d.argspec) for d in own.values()],
        environments=[EnvironmentSpec(d.name, d.argspec or "[") for d in env_defs.values()],  # "[": an option its begin code reads (`\proof`)
    )
    macro_specs = [MacroSpec(name, starred(args, name)) for name, args in _MACRO_ARGS.items()]
    macro_specs += [MacroSpec(name, "*[[{") for name in CITE_COMMANDS]
    macro_specs += [MacroSpec(name, args_parser=_RawArgParser("braced")) for name in URL_COMMANDS]
    macro_specs.append(MacroSpec("verb", args_parser=_RawArgParser("verb")))
    macro_specs.append(MacroSpec("href", args_parser=_RawArgParser("href")))
    macro_specs.append(MacroSpec("lstinline", args_parser=_RawArgParser("verb")))
    macro_specs += [MacroSpec(name, args_parser=_RawArgParser("braced")) for name in CODE_COMMANDS | {"pyc", "pyb"}]
    macro_specs.append(MacroSpec("tikz", args_parser=_RawArgParser("tikz")))
    macro_specs.append(MacroSpec("ifx", args_parser=_RawArgParser("tokens")))
    macro_specs += [MacroSpec(name, args_parser=_RawArgParser("integer" if name in INTEGER_PARAMETERS else "dimen"))
                    for name in DIMEN_COMMANDS]
    macro_specs += definition_specs()
    env_specs = [EnvironmentSpec(name, args) for name, args in _ENV_ARGS.items()]
    db.add_context_category("peerlint", macros=macro_specs, environments=env_specs, prepend=True)
    db.add_context_category(
        "peerlint-user",
        macros=[MacroSpec(c.name, c.argspec) for c in user_cmds.values()],
        prepend=True,
    )
    db.set_unknown_environment_spec(EnvironmentSpec("", "["))
    db.freeze()
    for alias, target in aliases.items():  # an alias reads the arguments of what it stands for
        spec = db._macros.get(target)
        if spec is not None:
            db._macros[alias] = MacroSpec(alias, args_parser=spec.args_parser)
    return Tables(user_cmds, user_envs, dict(macros), db, defs, env_defs, note_macros(defs), aliases,
                  dict(definitions[3]), dict(definitions[4]), dict(definitions[5][1]), definitions[5][0],
                  stores=storing(own, skip))
