"""The kit's plain-text formula notation, translated into LaTeX for the docs site.

The docstrings write formulas to be read in a notebook (``help(dp.laplace_mechanism)``):
``e^eps / (1 + e^eps)``, ``sigma = sqrt(2 ln(1.25/delta)) * Delta_2 / epsilon``,
``ε√(2k ln(1/δ'))``. This module finds such formulas in a line of prose and writes each
as LaTeX, so that ``docs/docstrings.py`` can show it typeset (``:math:`` and
``.. math::``) while the docstring itself stays plain text.

The rule that keeps the result honest is a closed vocabulary: a formula is a run of
numbers, single letters, Greek letters (``ε`` or a spelled name: ``eps``, ``delta``,
``Delta``, ...), a few function names (``sqrt``, ``ln``, ``exp``, ``Lap``, ``Var``, ...),
the documented function's own parameter names (set in roman: ``value``, ``sensitivity``),
operators and brackets. Any other word ends the run, and so does a comma outside brackets,
a full stop, a colon or a bracket left unmatched. A run becomes maths only if it carries
a sign of mathematics (an operator, a Greek letter, a sub- or superscript, a function
applied to something); a run that cannot be translated stays the text it was.
``translate_formula`` is the strict form used for a whole displayed line.
"""

from __future__ import annotations

import contextvars
import re

#: spelled Greek letters -> LaTeX (eps and epsilon both: the kit writes either)
GREEK_NAMES = {
    "eps": r"\varepsilon", "epsilon": r"\varepsilon", "delta": r"\delta", "Delta": r"\Delta",
    "sigma": r"\sigma", "alpha": r"\alpha", "beta": r"\beta", "gamma": r"\gamma",
    "Gamma": r"\Gamma", "rho": r"\rho", "nu": r"\nu", "mu": r"\mu", "pi": r"\pi",
    "lambda": r"\lambda", "Lambda": r"\Lambda", "tau": r"\tau", "theta": r"\theta",
    "phi": r"\varphi", "Phi": r"\Phi", "eta": r"\eta", "xi": r"\xi", "omega": r"\omega",
    "chi": r"\chi", "psi": r"\psi", "zeta": r"\zeta", "kappa": r"\kappa",
}
GREEK_LETTERS = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon",
    "ϵ": r"\epsilon", "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ι": r"\iota",
    "κ": r"\kappa", "λ": r"\lambda", "μ": r"\mu", "ν": r"\nu", "ξ": r"\xi", "π": r"\pi",
    "ρ": r"\rho", "σ": r"\sigma", "τ": r"\tau", "φ": r"\varphi", "χ": r"\chi", "ψ": r"\psi",
    "ω": r"\omega", "Γ": r"\Gamma", "Δ": r"\Delta", "Θ": r"\Theta", "Λ": r"\Lambda",
    "Ξ": r"\Xi", "Π": r"\Pi", "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega", "ℓ": r"\ell",
}
#: function names: they count as mathematics only when applied to something
FUNCTIONS = {
    "sqrt": r"\sqrt", "exp": r"\exp", "ln": r"\ln", "log": r"\log", "max": r"\max",
    "min": r"\min", "argmax": r"\operatorname{argmax}",
    "argmin": r"\operatorname{argmin}", "Lap": r"\mathrm{Lap}", "Var": r"\operatorname{Var}",
    "Pr": r"\Pr", "sup": r"\sup", "Bin": r"\mathrm{Bin}", "Beta": r"\mathrm{Beta}", "sign": r"\operatorname{sign}",
}
#: operators -> LaTeX; ``*`` and a spaced ``x`` are decided by their neighbours
OPERATORS = {
    "<=>": r"\iff", "<=": r"\le", ">=": r"\ge", "=>": r"\Rightarrow", "->": r"\to",
    "!=": r"\ne", "==": "=", "+-": r"\pm", "-+": r"\mp", "||": r"\,\|\,", "...": r"\dots", "..": r"\dots",
    "+": "+", "-": "-", "−": "-", "·": r"\cdot", "×": r"\times", "/": "/", "=": "=",
    "<": "<", ">": ">", "≤": r"\le", "≥": r"\ge", "≠": r"\ne", "≈": r"\approx",
    "~": r"\sim", "∝": r"\propto", "±": r"\pm", "‖": r"\|", "∈": r"\in", "→": r"\to",
    "←": r"\leftarrow", "…": r"\dots", "*": r"\cdot", "**": "^", "^": "^", "_": "_",
}
SYMBOLS = {"√": r"\sqrt", "Σ": r"\sum", "∑": r"\sum", "∏": r"\prod", "∞": r"\infty"}
_SUP = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+"))
_SUB = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋ᵢⱼₖ", "0123456789+-ijk"))
#: sum and prod are operators only with a subscript (sum_i, sum_{i=1}^n): else English
_SCRIPTED = {"sum": r"\sum", "prod": r"\prod"}
_ACCENTS = {"hat": r"\hat", "bar": r"\bar", "tilde": r"\tilde"}
#: English words of one letter: a formula only when an operator or bracket touches them
_ENGLISH_LETTERS = {"a", "A", "I"}
#: the documented function's own parameter names (``value + Lap(sensitivity / epsilon)``):
#: words of the formula, set for the time of one ``find_formulas`` call
_PARAMETERS: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "parameters", default=frozenset())

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<abbrev>[A-Za-z]\.[A-Za-z]\.)
  | (?P<num>\d{1,3}(?:,\d{3})+(?![\d,])|\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![_\d]))
  | (?P<word>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*(?![A-Za-z0-9]))
  | (?P<digits>\d+)
  | (?P<symbol>[√Σ∑∏∞])
  | (?P<greek>[α-ωΑ-Ωϵℓ])
  | (?P<sup>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)
  | (?P<sub>[₀₁₂₃₄₅₆₇₈₉₊₋ᵢⱼₖ]+)
  | (?P<prose>'s(?![A-Za-z])|--+|//|<<|>>)
  | (?P<op><=>|<=|>=|=>|->|!=|==|\+-|-\+|\|\||\.\.\.|\.\.|\*\*|[-+−·×/=<>≤≥≠≈~∝±‖∈→←…*^_|])
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<comma>,)
  | (?P<prime>')
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)

#: "Task 3a/3b": labels of the text, not a quotient of products
_LABELS = re.compile(r"\d+[a-z](?:/\d+[a-z])+")
_PAIRS = {")": "(", "]": "[", "}": "{"}
_BINARY = set(OPERATORS) - {"|", "‖", "*", "**", "^", "_"}
_RELATIONS = {"=", "<", ">", "<=", ">=", "≤", "≥", "≠", "!=", "≈", "<=>", "=>", "->", "→", "∝", "~"}


class NotMath(ValueError):
    """The text is not a formula of the kit's notation."""


class _Tok:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind, text, start, end):
        self.kind, self.text, self.start, self.end = kind, text, start, end

    def __repr__(self):
        return f"{self.kind}:{self.text!r}"


def tokenize(text: str) -> list[_Tok]:
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("digits", "abbrev", "prose"):  # "2017a", "i.e.", "it's", "--": prose
            kind = "other"  # a number glued to a word ("2017a"): prose
        out.append(_Tok(kind, m.group(), m.start(), m.end()))
    return out


# --- what a token is ---------------------------------------------------------------------

def _word_latex(word: str) -> str | None:
    """A word of the vocabulary as LaTeX, or None (``f_hat_v`` -> ``\\hat{f}_{v}``)."""
    if word in _PARAMETERS.get() and len(word) > 1 and word not in GREEK_NAMES:
        return r"\mathrm{" + word.replace("_", r"\_") + "}"
    if "_" not in word:
        if len(word) == 1:
            return word
        return GREEK_NAMES.get(word) or FUNCTIONS.get(word) or _SCRIPTED.get(word)
    base, *parts = word.split("_")
    if len(base) == 1:
        latex = base
    elif base in GREEK_NAMES:
        latex = GREEK_NAMES[base]
    elif base in _SCRIPTED or base in FUNCTIONS and base != "sqrt":
        latex = _SCRIPTED.get(base) or FUNCTIONS[base]
    else:
        return None
    subs = []
    for part in parts:
        if part in _ACCENTS and not subs and (len(base) == 1 or base in GREEK_NAMES):
            latex = f"{_ACCENTS[part]}{{{latex}}}"
        elif len(part) == 1 or part.isdigit():
            subs.append(part)
        elif part in GREEK_NAMES:
            subs.append(GREEK_NAMES[part])
        else:
            return None
    return latex + (f"_{{{','.join(subs)}}}" if subs else "")


def _is_function(tok: _Tok) -> bool:
    """A name that needs something after it (sqrt, ln, sum_i, √, Σ)."""
    if tok.kind == "symbol":
        return tok.text != "∞"
    if tok.kind != "word":
        return False
    base = tok.text.split("_")[0]
    return tok.text in FUNCTIONS or tok.text in _SCRIPTED or \
        "_" in tok.text and base in set(FUNCTIONS) | set(_SCRIPTED)


def _is_operand(tok: _Tok) -> bool:
    """Can stand as (the start of) a factor."""
    return tok.kind in ("num", "greek", "open") or tok.kind == "symbol" or \
        tok.kind == "word" and _word_latex(tok.text) is not None or \
        tok.kind == "op" and tok.text in ("|", "‖")


def _ends_operand(tok: _Tok) -> bool:
    return tok.kind in ("num", "greek", "close", "prime", "sup", "sub") or \
        tok.kind == "word" and _word_latex(tok.text) is not None and not _is_function(tok) or \
        tok.kind == "symbol" and tok.text == "∞"


# --- finding the formulas in a line of prose ----------------------------------------------

def _significant(toks, i, step):
    j = i + step
    while 0 <= j < len(toks) and toks[j].kind == "ws":
        j += step
    return toks[j] if 0 <= j < len(toks) else None


#: a Greek name followed by one of these is the English word: "the delta method"
_NAMED_AFTER = {"delta": ("method",)}


def _breaks(toks: list[_Tok], text: str) -> list[bool]:
    """For each token, whether it cannot belong to a formula in this line."""
    brk = []
    depth = 0
    for i, tok in enumerate(toks):
        prev = toks[i - 1] if i else None
        if tok.kind == "open":
            depth += 1
        elif tok.kind == "close":
            depth = max(depth - 1, 0)
        if tok.kind == "other":
            b = True
        elif tok.kind == "word":
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            after = _significant(toks, i, 1)
            if tok.text in _SCRIPTED:
                b = nxt is None or nxt.text != "_"
            elif _is_function(tok) and "_" not in tok.text:
                # "log-log", "max over": a function name with nothing to apply it to
                b = after is None or not (_is_operand(after) or after.text in ("_", "^")
                                          or after.kind in ("sub", "sup"))
            else:
                b = _word_latex(tok.text) is None or after is not None and \
                    after.text in _NAMED_AFTER.get(tok.text, ())
        elif tok.kind == "comma":
            b = depth == 0
        elif tok.kind == "prime":  # a prime only right after a factor, never "x's"
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            b = prev is None or not _ends_operand(prev) or (nxt is not None and nxt.kind == "word")
        elif tok.kind == "op" and tok.text in ("*", "~") and prev is not None and \
                prev.kind == "word" and (_is_function(prev) or tok.text == "~" and (
                    i + 1 == len(toks) or not _is_operand(toks[i + 1]))):
            b = True  # Var* and sum~ name statistics of the text (z~μ is a relation)
        elif tok.kind == "op" and tok.text in ("-", "*", "**") and i + 1 < len(toks):
            nxt = toks[i + 1]
            # 30-39 is a range; k*step and 10**log_epsilons multiply by a name of code
            b = (tok.text == "-" and prev is not None and prev.kind == "num" and nxt.kind == "num") \
                or (tok.text != "-" and nxt.kind in ("word", "other") and _word_latex(nxt.text) is None)
        elif tok.kind == "ws" and "\n" in tok.text:
            # a formula goes on to the next line only when it is visibly unfinished
            last = _significant(toks, i, -1)
            rest = text[tok.end:].lstrip()
            b = not (depth > 0 or (last is not None and last.kind == "op" and last.text in _BINARY)) \
                or re.match(r"([-*+]|\d+[.)])\s", rest) is not None
        else:
            b = False
        brk.append(b)
    return brk


def _split_unmatched(toks: list[_Tok]) -> list[list[_Tok]]:
    """Split a run at brackets (and ``|``) that have no partner inside it."""
    stack, bad = [], set()
    for i, tok in enumerate(toks):
        if tok.kind == "open":
            stack.append(i)
        elif tok.kind == "close":
            if stack and toks[stack[-1]].text == _PAIRS[tok.text]:
                stack.pop()
            else:
                bad.add(i)
    bad.update(stack)
    bars = [i for i, t in enumerate(toks) if t.kind == "op" and t.text == "|"]
    if len(bars) % 2:
        bad.update(bars)
    return _cut(toks, bad)


def _cut(toks, bad):
    pieces, cur = [], []
    for i, tok in enumerate(toks):
        if i in bad:
            pieces.append(cur)
            cur = []
        else:
            cur.append(tok)
    pieces.append(cur)
    return [p for p in pieces if p]


def _juxtaposition_cuts(toks: list[_Tok]) -> set[int]:
    """Places where two factors side by side are prose, not a product: an English
    one-letter word, a number after a factor ("Theorem 3 2"), a tuple after a space
    ("k (ε, 0)-DP")."""
    bad = set()
    for i, tok in enumerate(toks):
        prev = toks[i - 1] if i else None
        if tok.kind == "word" and (tok.text in _ENGLISH_LETTERS or _is_parameter(tok.text)):
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            before, after = _significant(toks, i, -1), _significant(toks, i, 1)
            touches = nxt is not None and nxt.kind != "ws" or prev is not None and prev.kind != "ws"
            near_op = any(t is not None and t.kind == "op" and t.text in _BINARY
                          for t in (before, after))
            if not (touches or near_op):
                bad.add(i)
        elif tok.kind == "num" and prev is not None and prev.kind == "ws":
            before = _significant(toks, i, -1)
            if before is not None and _ends_operand(before):
                bad.add(i - 1)
        elif tok.kind == "open" and tok.text == "(" and prev is not None and prev.kind == "ws":
            before = _significant(toks, i, -1)
            if before is not None and _ends_operand(before) and (
                    _has_top_comma(toks, i) or _has_top_relation(toks, i)
                    or not _has_top_sum(toks, i)):
                bad.add(i - 1)
    return bad


def _top_commas(toks):
    """Commas outside every bracket of the piece (the piece began inside a bracket of the
    sentence, "(label, eps, delta)"): each side is a formula of its own."""
    depth, cuts = 0, set()
    for i, tok in enumerate(toks):
        if tok.kind == "open":
            depth += 1
        elif tok.kind == "close":
            depth -= 1
        elif tok.kind == "comma" and depth == 0:
            cuts.add(i)
    return cuts


def _is_parameter(word: str) -> bool:
    """A parameter name that is also an English word ("value"): it joins a formula through
    an operator or a bracket, never by standing next to a factor."""
    return len(word) > 1 and word in _PARAMETERS.get() and word not in GREEK_NAMES


def _has_top_sum(toks, i):
    """Whether the group opened at ``toks[i]`` is a sum or difference, or raised to a
    power: only those need brackets to be multiplied (``k (2 - e^eps)``); after a space,
    any other group is a remark (``σ (σ/Δ)``, ``Lap(scale) (scale = b)``)."""
    depth = 0
    for j in range(i, len(toks)):
        tok = toks[j]
        if tok.kind == "open":
            depth += 1
        elif tok.kind == "close":
            depth -= 1
            if depth == 0:  # a raised group is a factor too: 2 (Δ/ε)^2
                return j + 1 < len(toks) and (toks[j + 1].text in ("^", "**")
                                              or toks[j + 1].kind == "sup")
        elif tok.kind == "op" and tok.text in ("+", "-", "−", "±", "+-", "-+") and depth == 1:
            return True
    return False


def _has_top(toks, i, is_mark):
    """Whether the group opened at ``toks[i]`` holds, at its own level, a token for which
    ``is_mark`` is true."""
    depth = 0
    for tok in toks[i:]:
        if tok.kind == "open":
            depth += 1
        elif tok.kind == "close":
            depth -= 1
            if depth == 0:
                return False
        elif depth == 1 and is_mark(tok):
            return True
    return False


def _has_top_relation(toks, i):
    """Whether the group opened at ``toks[i]`` states a relation: ``ε -> 0 (2p - 1 ~ ε/2)``
    is a remark beside the formula, not a factor of it."""
    return _has_top(toks, i, lambda tok: tok.kind == "op" and tok.text in _RELATIONS)


def _has_top_comma(toks, i):
    return _has_top(toks, i, lambda tok: tok.kind == "comma")


def _trim(toks: list[_Tok]) -> list[_Tok]:
    """Drop spaces, a dangling operator or comma at either end of a piece."""
    while toks:
        a, b = toks[0], toks[-1]
        if a.kind in ("ws", "comma", "prime", "sup", "sub") or a.kind == "op" and not (
                a.text in ("-", "−", "±", "|", "‖") and len(toks) > 1 and toks[1].kind != "ws"):
            toks = toks[1:]
        elif b.kind in ("ws", "comma") or b.kind == "op" and b.text not in ("|", "‖", "*") or \
                _is_function(b) or b.kind == "op" and b.text == "*" and (
                    len(toks) < 2 or toks[-2].kind not in ("word", "greek")):
            toks = toks[:-1]
        else:
            return toks
    return toks


def _has_signal(toks: list[_Tok]) -> bool:
    words = [t for t in toks if t.kind not in ("ws", "op", "open", "close", "comma")]
    if words and all(t.kind == "word" and _is_parameter(t.text) for t in words):
        return False  # "request/collect/judge", "lower < upper": names in a sentence
    for i, tok in enumerate(toks):
        if tok.kind in ("greek", "sup", "sub", "symbol"):
            return True
        if tok.kind == "op" and tok.text not in ("|",):
            return True
        if tok.kind == "word":
            if tok.text in GREEK_NAMES or "_" in tok.text:
                return True
            if tok.text in FUNCTIONS and i + 1 < len(toks):
                return True
        if tok.kind == "word" and tok.text == "x" and _is_times(toks, i):
            return True
    return False


def _is_times(toks, i):
    """A spaced ``x`` between two factors is a product sign: ``k x k``, ``2 x 3``."""
    if not (0 < i < len(toks) - 1 and toks[i - 1].kind == "ws" and toks[i + 1].kind == "ws"):
        return False
    before, after = _significant(toks, i, -1), _significant(toks, i, 1)
    return before is not None and after is not None and _ends_operand(before) and \
        before.kind in ("num", "word", "close") and after.kind in ("num", "word")


def find_formulas(text: str, parameters=()) -> list[tuple[int, int, str]]:
    """``(start, end, latex)`` for every formula found in ``text`` (a line or a paragraph);
    ``parameters``: the documented function's parameter names, words a formula may use."""
    token = _PARAMETERS.set(frozenset(parameters))
    try:
        return _find_formulas(text)
    finally:
        _PARAMETERS.reset(token)


def _find_formulas(text: str) -> list[tuple[int, int, str]]:
    toks = tokenize(text)
    brk = _breaks(toks, text)
    runs, cur = [], []
    for tok, b in zip(toks, brk):
        if b:
            runs.append(cur)
            cur = []
        else:
            cur.append(tok)
    runs.append(cur)
    found = []
    todo = [r for r in runs if r]
    while todo:
        run = todo.pop(0)
        pieces = _split_unmatched(run)
        if len(pieces) != 1 or len(pieces[0]) != len(run):
            todo[:0] = pieces
            continue
        cuts = _juxtaposition_cuts(run) | _top_commas(run)
        if cuts:
            todo[:0] = _cut(run, cuts)
            continue
        piece = _trim(run)
        if len(piece) != len(run):
            if piece:
                todo.insert(0, piece)
            continue
        if not _has_signal(piece):
            continue
        start, end = piece[0].start, piece[-1].end
        if _LABELS.fullmatch(text[start:end]):
            continue
        try:
            latex = _render(tokenize(text[start:end]))
        except NotMath:
            continue
        found.append((start, end, latex))
    return found


def translate_formula(text: str, parameters=()) -> str:
    """A whole line that must be one formula (a displayed equation) as LaTeX; raises
    NotMath when any part of it is not. A closing full stop or comma is kept."""
    token = _PARAMETERS.set(frozenset(parameters))
    try:
        return _translate_formula(text)
    finally:
        _PARAMETERS.reset(token)


def _translate_formula(text: str) -> str:
    body = text.strip()
    tail = ""
    if body.endswith((".", ",", ";")):
        body, tail = body[:-1].rstrip(), body[-1]
    toks = tokenize(body)
    if not toks or any(b for b, t in zip(_breaks(toks, body), toks) if t.kind != "comma"):
        raise NotMath(text)
    if _split_unmatched(toks) != [toks] or _juxtaposition_cuts(toks) or _trim(toks) != toks \
            or not _has_signal(toks):
        raise NotMath(text)
    return _render(toks, top_commas=True) + tail


# --- writing LaTeX -----------------------------------------------------------------------

def _number(text: str) -> str:
    if "," in text:
        return text.replace(",", r"\,")  # 30,000 with a thin space
    m = re.fullmatch(r"(\d+(?:\.\d+)?)e([-+]?)(\d+)", text)
    if not m:
        return text
    mantissa, sign, power = m.groups()
    power = ("-" if sign == "-" else "") + power.lstrip("0") or "0"
    ten = f"10^{{{power}}}"
    return ten if mantissa == "1" else rf"{mantissa} \cdot {ten}"


def _group_end(toks, i):
    """Index of the bracket closing the one opened at ``toks[i]``."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].kind == "open":
            depth += 1
        elif toks[j].kind == "close":
            depth -= 1
            if depth == 0:
                return j
    raise NotMath("unbalanced")


def _argument(toks, i):
    """The LaTeX of the script or root argument starting at ``toks[i]`` and the index
    after it: a bracketed group (its brackets dropped), a signed factor, or a factor."""
    while i < len(toks) and toks[i].kind == "ws":
        i += 1
    if i >= len(toks):
        raise NotMath("missing argument")
    tok = toks[i]
    if tok.kind == "open":
        end = _group_end(toks, i)
        inner = _render(toks[i + 1:end])
        if tok.text == "[":
            inner = f"[{inner}]"
        return inner, end + 1
    if tok.kind == "op" and tok.text in ("-", "−", "+", "+-"):
        sign = {"+": "+", "+-": r"\pm "}.get(tok.text, "-")
        nxt = _significant(toks, i, 1)
        if nxt is None or not _is_operand(nxt) or toks[i + 1].kind == "ws":
            return sign, i + 1  # (x)_+, the positive part
        inner, j = _argument(toks, i + 1)
        return sign + inner, j
    if tok.kind == "num":
        return _number(tok.text), i + 1
    if tok.kind == "greek":
        latex, j = GREEK_LETTERS[tok.text], i + 1
        if j < len(toks) and toks[j].kind == "sub":  # e^ε₀: the subscript is the exponent's
            latex += "_{" + "".join(_SUB[c] for c in toks[j].text) + "}"
            j += 1
        return latex, j
    if tok.kind == "word" and not _is_function(tok):
        latex = _word_latex(tok.text)
        if latex is not None:
            j = i + 1
            while j < len(toks) and toks[j].kind == "prime":
                latex += "'"
                j += 1
            return latex, j
    if tok.kind == "symbol" and tok.text == "∞":
        return r"\infty", i + 1
    raise NotMath(f"no argument at {tok.text!r}")


def _render(toks: list[_Tok], top_commas: bool = False) -> str:
    out: list[str] = []
    i = 0
    depth = 0
    while i < len(toks):
        tok = toks[i]
        kind, text = tok.kind, tok.text
        if kind == "ws":
            i += 1
            continue
        if kind == "num":
            out.append(_number(text))
        elif kind == "greek":
            out.append(GREEK_LETTERS[text])
        elif kind == "word":
            if text in _SCRIPTED:
                out.append(_SCRIPTED[text])
                i += 1
                continue
            if text in ("sqrt",):
                arg, i = _argument(toks, i + 1)
                out.append(rf"\sqrt{{{arg}}}")
                continue
            if text == "x" and _is_times(toks, i):
                out.append(r"\times")
            elif text == "E" and i + 1 < len(toks) and toks[i + 1].text in ("[", "_", "|"):
                out.append(r"\mathbb{E}")
            elif text == "N" and i + 1 < len(toks) and toks[i + 1].text == "(":
                out.append(r"\mathcal{N}")
            else:
                latex = _word_latex(text)
                if latex is None:
                    raise NotMath(text)
                if text.startswith("E_") and i + 1 < len(toks) and toks[i + 1].text == "[":
                    latex = r"\mathbb{E}" + latex[1:]  # E_Q[...], an expectation
                out.append(latex)
        elif kind == "symbol":
            if text == "√":
                arg, i = _argument(toks, i + 1)
                out.append(rf"\sqrt{{{arg}}}")
                continue
            out.append(SYMBOLS[text])
        elif kind == "sup":
            out.append("^{" + "".join(_SUP[c] for c in text) + "}")
        elif kind == "sub":
            out.append("_{" + "".join(_SUB[c] for c in text) + "}")
        elif kind == "prime":
            out.append("'")
        elif kind == "comma":
            out.append(r",\quad" if depth == 0 and top_commas else ", ")
        elif kind == "open":
            depth += 1
            out.append(r"\{" if text == "{" else text)
        elif kind == "close":
            depth -= 1
            out.append(r"\}" if text == "}" else text)
        elif kind == "op":
            if text in ("^", "**", "_"):
                if not out:
                    raise NotMath("a script with no base")
                arg, i = _argument(toks, i + 1)
                out.append(("_" if text == "_" else "^") + "{" + arg + "}")
                continue
            if text == "*":
                after = _significant(toks, i, 1)
                before = toks[i - 1] if i else None
                if after is not None and _is_operand(after) and (
                        before is None or before.kind == "ws" or toks[i + 1].kind != "ws"):
                    out.append(r"\cdot")
                elif before is not None and before.kind in ("word", "greek") and \
                        not _is_function(before):
                    out.append("^{*}")  # r* (a starred name), not a product
                else:
                    raise NotMath("a star with nothing to star")
            elif text == "|":
                out.append("|")
            elif text == "||":
                spaced = 0 < i < len(toks) - 1 and toks[i - 1].kind == toks[i + 1].kind == "ws"
                out.append(r"\,\|\," if spaced else r"\|")  # P || Q, or a norm ||x||
            else:
                out.append(OPERATORS[text])
        else:
            raise NotMath(text)
        i += 1
    latex = _join(out)
    # a relation or product sign with nothing on one side is not a formula
    if re.search(r"[({\[]\s*(,|\\cdot|\\times|=|\\le|\\ge|<|>|/)(?![a-z])|"
                 r"(,|\\cdot|\\times|=|\\le|\\ge|<|>|/)\s*[)}\]]|^(\\cdot|\\times|=|/)|"
                 r"(\\cdot|\\times|=|/)$", latex):
        raise NotMath(latex)
    return latex


def _join(parts: list[str]) -> str:
    """LaTeX pieces joined with the spaces a reader of the source expects: around
    relations and signs, between a name and a letter, none inside brackets."""
    text = ""
    for part in parts:
        unary = part in ("-", "+", r"\pm", r"\mp") and (
            not text.strip() or text.rstrip()[-1] in "([{," or text.endswith(" "))
        if unary:  # a sign, not an operation: -1/b, e^{-k}, (-E, E)
            text += part
        elif part in _SPACED:
            text = text.rstrip() + f" {part} "
        elif text and re.search(r"[A-Za-z]$", text) and re.match(r"[A-Za-z0-9\\]", part):
            text += " " + part
        else:
            text += part
    return re.sub(r" +", " ", text).replace(", )", ",)").strip()


_SPACED = {"=", "+", "-", "<", ">", r"\le", r"\ge", r"\ne", r"\approx", r"\sim", r"\propto",
           r"\pm", r"\mp", r"\iff", r"\Rightarrow", r"\to", r"\leftarrow", r"\in", r"\cdot",
           r"\times", r"\,\|\,"}
