"""The prose of the notebooks: formulas are typeset, and quoted numbers are computed.

1. Formulas typeset: a markdown cell may not write ``e^ε``, ``e^{2ε}``,
   ``2^n`` or ``e^(−t)`` as plain text; formulas go in ``$…$`` or ``$$…$$`` (JupyterLab,
   Voilà, GitHub and the docs site render them). Nor any other formula in plain Unicode
   (``√2·b``, ``Lap(Δf/ε)``, ``b = 1/ε``, ``10⁻⁶``): :data:`PLAIN_FORMULA` says which.
   Every formula renders in KaTeX, and money is written inside maths (``$\\$4.01$``).
2. Numbers tied to outputs: every decimal number a notebook's markdown quotes (0.014,
   3.16, 12.2, ...) appears, written the same way, in an output of the same notebook
   (text/plain, stream or text/html), unless the notebook's code sets it (an input such
   as ``eps = 0.5``), it follows a citation word ("Theorem 3.20", "Def. 2.4"), or it is
   listed in ``EXCEPTIONS`` below with a one-word reason.

Failures name the notebook, the cell, the line and the text, so the owner of a notebook
can fix it from the message alone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").rglob("*.ipynb"))
IDS = [str(p.relative_to(ROOT / "notebooks")) for p in NOTEBOOKS]


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


# --------------------------------------------------------------- the prose of a markdown cell
def _blank(match) -> str:
    """Replace a span by spaces, keeping its newlines (so line numbers stay right)."""
    return re.sub(r"[^\n]", " ", match.group())


_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_ESCAPED_DOLLAR = re.compile(r"\\\$")
#: maths spans; an escaped dollar (``\\$``) neither opens nor closes one, and may stand
#: inside one (money is written ``$\\$4.01$``: see test_money_is_written_inside_maths)
_DISPLAY = re.compile(r"(?<!\\)\$\$.+?(?<!\\)\$\$", re.S)
_INLINE = re.compile(r"(?<!\\)\$(?!\s)(?:\\\$|[^$\n]|\n(?!\s*\n))+?(?<![\s\\])\$")
_URL = re.compile(r"\]\([^)\s]*\)|<?https?://[^\s>)]+>?")


def _no_code(markdown: str) -> str:
    """The markdown with fenced code, code spans, HTML comments and links' targets blanked."""
    text = _FENCE.sub(_blank, markdown)
    text = _CODE.sub(_blank, text)
    text = _COMMENT.sub(_blank, text)
    return _URL.sub(_blank, text)


def _no_maths(text: str) -> str:
    """``text`` with its $$...$$ and $...$ spans blanked."""
    return _INLINE.sub(_blank, _DISPLAY.sub(_blank, text))


def prose(markdown: str, *, keep_maths: bool = False) -> str:
    """The markdown with code, HTML comments, links' targets and (unless ``keep_maths``)
    LaTeX maths blanked out: what a reader sees as plain text. Escaped dollars (``\\$4``)
    are text, not maths delimiters."""
    text = _no_code(markdown)
    return _ESCAPED_DOLLAR.sub("  ", text if keep_maths else _no_maths(text))


# --------------------------------------------------------- 1. formulas typeset, not plain text
#: a caret between two non-blank characters, not a footnote mark ``[^1]``
CARET = re.compile(r"(?<=[^\s\[])\^(?=\S)")
#: a formula written in plain text (Unicode) rather than LaTeX: a caret (above), a product
#: dot between symbols (√2·b; a heading's " · " is punctuation), a root, a superscript or
#: subscript (10⁻⁶, σ², Δ₂f), a relation or operator sign (±, ≤, ≥, ∝, ×), a function
#: applied (exp(, ln(, ln 2, Lap(, Pr[), a Greek letter in arithmetic or an equation
#: (b = 1/ε, kε), a one-letter variable set equal to something (n = 100) or a minus sign
#: (−, not the hyphen or the en dash of a range). A Greek letter alone ("the privacy loss
#: ε", "ε-DP") is a name, not a formula.
PLAIN_FORMULA = re.compile(
    CARET.pattern + r"|\S·\S|√|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻₀₁₂₃₄₅₆₇₈₉ᵢⱼₖ]|[±≤≥∝∑∫½‖]|\w\s*×\s*\w"
    r"|\b(?:exp|ln|log|Lap|Pr)\s*[\[(]|\bln [\wα-ω]"
    r"|[εδσμαβπΔρλ][′']?\s*[/+−<>=]|[/+−<>=]\s*[εδσμαβπΔρλ]"
    r"|[A-Za-z0-9][εδσμαβπΔρλ]|(?<![\w.])[A-Za-z]\s?=\s?[\w(−-]|−")


def plain_formulas(markdown: str) -> list[tuple[int, str]]:
    """(line number, the line) for each line whose prose (maths, code, comments and link
    targets blanked) holds a formula written as plain text."""
    lines = markdown.split("\n")
    return [(n, lines[n - 1].strip()) for n, line in enumerate(prose(markdown).split("\n"), 1)
            if PLAIN_FORMULA.search(line)]


@pytest.mark.parametrize("text", [
    "e^{2ε}", "e^−ε·(1 − δ − α)", "all 2^n subsets", "e^(−t)", "x ∈ ℕ^|𝒳|",
    "a bound e^ε on $x$", "$a$ and e^ε", "costs \\$4 and e^ε then \\$5",
    "```python\nx = 1\n```\nnow 4^n",
    "its standard deviation √2·b", "noise Lap(Δf/ε) on each count", "with b = 1/ε",
    "at δ = 10⁻⁵", "10⁻⁶ and σ²", "the ℓ2 sensitivity Δ₂f", "Pr[r] ∝ exp(ε·u/(2Δu))",
    "values ln 2 and ln 3", "keeps ε ≤ 1", "truth ± 2 b", "the missing ½", "costs kε + δ",
    "charges 2ε", "with n = 100 people", "the distance |i − j|",
])
def test_plain_formula_detector_sees_formulas(text):
    assert plain_formulas(text), text


@pytest.mark.parametrize("text", [
    "$e^{2\\varepsilon}$", "$$\\Pr[M(x) \\in S] \\le e^{\\varepsilon}\\Pr[M(y) \\in S] + \\delta$$",
    "a footnote[^1] here", "the `x ^ y` operator and `a**2`", "```\nz = x^2\n```",
    "XOR is written a ^ b", "see [a link](https://example.org/a^b)",
    "<!-- e^x -->", "over two lines $e^{\n\\varepsilon}$",
    "# 06 · The Laplace mechanism", "## Task 1 · Group privacy (2 points)",
    "the privacy loss ε of a mechanism", "an (ε, δ)-DP mechanism is ε-DP when δ is 0",
    "with $b = 1/\\varepsilon$ and $\\sqrt{2}\\,b$", "`dp.laplace_scale(1, eps)` with `b = 1/eps`",
    "**δ as a hockey stick**", "see [the docs](https://example.org/?a=ε/2)",
    "notebooks 00–11 and a well-known result", "A1–A6, in 2014 (pp. 211–407)",
])
def test_plain_formula_detector_leaves_names_and_latex_alone(text):
    assert not plain_formulas(text), text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_formulas_in_prose_are_typeset(path):
    found = [f"{path.relative_to(ROOT)}: cell {i}, line {n}: {line}"
             for i, cell in enumerate(_cells(path)) if cell["cell_type"] == "markdown"
             for n, line in plain_formulas(_source(cell))]
    assert not found, "typeset these formulas in LaTeX ($...$ or $$...$$):\n" + "\n".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_money_is_written_inside_maths(path):
    """JupyterLab (and so Voila) honours neither ``\\$4.01`` nor ``&#36;4.01`` in markdown:
    MathJax pairs the dollar sign with the next ``$`` and garbles the sentence between (seen
    in Chromium). Inside maths it is safe: money is written ``$\\$4.01$``."""
    found = [f"{path.relative_to(ROOT)}: cell {i}: {line.strip()}"
             for i, cell in enumerate(_cells(path)) if cell["cell_type"] == "markdown"
             for line in _no_maths(_no_code(_source(cell))).split("\n")
             if "\\$" in line or "&#36;" in line]
    assert not found, "write money as $\\$4.01$:\n" + "\n".join(found)


def formulas(markdown: str) -> list[tuple[bool, str]]:
    """(display?, TeX) for each $$...$$ and $...$ of a markdown cell's prose."""
    text = _no_code(markdown)
    found = [(True, m.group()[2:-2]) for m in _DISPLAY.finditer(text)]
    return found + [(False, m.group()[1:-1]) for m in _INLINE.finditer(_DISPLAY.sub(_blank, text))]


#: render each formula with KaTeX (``make test`` installs it in .node/); print the failures
_KATEX = """
const katex = require(process.argv[process.argv.length - 1]); const items = JSON.parse(require('fs').readFileSync(0));
for (const [where, display, tex] of items) {
  try { katex.renderToString(tex, {displayMode: display, throwOnError: true, strict: 'ignore'}); }
  catch (e) { console.log(where + ': ' + JSON.stringify(tex) + ': ' + e.message.split('\\n')[0]); }
}
"""


def katex_failures(items):
    """The lines KaTeX prints for the (where, display, TeX) items it cannot render."""
    import shutil
    import subprocess
    katex = ROOT / ".node" / "node_modules" / "katex"
    node = shutil.which("node")
    assert node and katex.exists(), ("the formula check needs Node.js and KaTeX: `make test` "
                                     "installs KaTeX in .node/ (npm install --prefix .node katex@0.16)")
    out = subprocess.run([node, "-e", _KATEX, str(katex)], input=json.dumps(items),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()


def test_every_formula_renders():
    """Every $...$ and $$...$$ of every notebook's markdown renders in KaTeX (an error
    would show the student red source instead of the formula); a broken twin is caught."""
    items = [[f"{path.relative_to(ROOT)}: cell {i}", display, tex]
             for path in NOTEBOOKS for i, cell in enumerate(_cells(path))
             if cell["cell_type"] == "markdown" for display, tex in formulas(_source(cell))]
    assert len(items) > 2000
    twins = [["twin", False, r"\frac{1}{"], ["twin", False, r"\varepsilonn"]]
    failures = katex_failures(items + twins)
    assert len([f for f in failures if f.startswith("twin")]) == 2, failures
    failures = [f for f in failures if not f.startswith("twin")]
    assert not failures, "formulas KaTeX cannot render:\n" + "\n".join(failures)


# ------------------------------------------------------------- 2. numbers tied to outputs
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.]*\d)")
#: a number right after one of these is a reference into a text, not a result
CITATION = re.compile(r"(?:Theorems?|Thm\.?|Definitions?|Def\.|Facts?|Lemmas?|Corollary|"
                      r"Cor\.|Sections?|§|Algorithms?|Alg\.|eqs?\.|Examples?|Claims?|"
                      r"Propositions?|Prop\.|Remarks?|Figures?|Fig\.|Tables?|Chapters?|"
                      r"arXiv:|P\.L\.)\s*(?:[\d.]+(?:,\s*|\s+and\s+|\s*[–-]\s*))*$", re.I)

#: notebook -> {number as written: one-word reason}; inputs the code does not set
#: (slider positions a "Try it" suggests), published figures and citations.
EXCEPTIONS: dict[str, dict[str, str]] = {
    "02_attacks_on_statistics.ipynb": {"4.3": "seed", "0.003": "slider", "0.01": "slider"},
    "04_differential_privacy.ipynb": {"0.2": "exercise", "12.2": "published", "4.5": "published"},
    "11_auditing_and_floating_point.ipynb": {"0.42": "exercise"},
    "12_properties.ipynb": {"0.8": "exercise"},
    "14_clipping_and_means.ipynb": {"0.05": "slider"},
    "16_modern_accounting.ipynb": {"1.1": "grid", "1.2": "grid", "10.9": "grid", "0.5": "slider"},
    "17_local_model.ipynb": {"0.1": "slider", "0.001": "exercise"},
    "18_dp_sgd.ipynb": {"0.15": "input", "0.7": "slider"},
    "20_synthetic_data.ipynb": {"0.3": "slider", "0.1": "key"},
    "solutions/A9_accounting_and_dp_sgd.ipynb": {"0.005": "input", "0.3": "input"},
    "solutions/A5_exponential_mechanism.ipynb": {"4.00": "example"},
    "solutions/A6_auditing.ipynb": {"0.5": "exercise"},
}


def _outputs_text(cells) -> str:
    parts = []
    for cell in cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append(_join(out.get("text", "")))
            for kind in ("text/plain", "text/html", "text/markdown"):
                if kind in out.get("data", {}):
                    parts.append(_join(out["data"][kind]))
    return "\n".join(parts)


def _join(text) -> str:
    return text if isinstance(text, str) else "".join(text)


def unquoted_numbers(cells, exceptions=()) -> list[tuple[int, int, str, str]]:
    """(cell, line, number, the line) for each decimal number in the markdown that no
    output shows, that the code does not set, and that is not cited or excepted."""
    shown = set(DECIMAL.findall(_outputs_text(cells)))
    code = "\n".join(_source(c) for c in cells if c["cell_type"] == "code")
    inputs = set(DECIMAL.findall(code))
    found = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        text = prose(_source(cell), keep_maths=True)
        for m in DECIMAL.finditer(text):
            number = m.group()
            if number in shown or number in inputs or number in exceptions:
                continue
            if CITATION.search(text[max(0, m.start() - 30):m.start()]):
                continue
            line_no = text.count("\n", 0, m.start()) + 1
            found.append((i, line_no, number, _source(cell).split("\n")[line_no - 1].strip()))
    return found


def _fake(markdown, output, code="x = 1"):
    return [{"cell_type": "markdown", "source": markdown},
            {"cell_type": "code", "source": code,
             "outputs": [{"output_type": "stream", "name": "stdout", "text": output}]}]


def test_number_check_sees_a_number_no_output_shows():
    cells = _fake("the loss exceeds ε with probability 0.014", "probability 0.0142\n")
    assert [n for _, _, n, _ in unquoted_numbers(cells)] == ["0.014"]
    cells = _fake("a ratio of $3.16$ and 0.45", "ratio 3.16, other 0.453")
    assert [n for _, _, n, _ in unquoted_numbers(cells)] == ["0.45"]


def test_number_check_accepts_shown_set_cited_and_excepted_numbers():
    cells = _fake("At ε = 0.5 the loss is 0.72 (Dwork & Roth, Theorem 3.20; Def. 2.4; "
                  "Definitions 3.1 and 3.8); "
                  "see arXiv:2312.11283; the Census used 12.2", "loss: 0.72\n",
                  code="eps = 0.5")
    assert unquoted_numbers(cells, {"12.2": "published"}) == []
    cells = _fake("a `0.33` in code, ![x](fig_1.5.png), <!-- 2.5 -->", "")
    assert unquoted_numbers(cells) == []
    cells = _fake("worth \\$4.01 (money is a number too)", "")
    assert [n for _, _, n, _ in unquoted_numbers(cells)] == ["4.01"]


#: the student copies in exercises/ are generated from solutions/ (their markdown is the
#: same, their answer cells are blanked), so their numbers are checked in solutions/
WITH_OUTPUTS = [p for p in NOTEBOOKS if p.parent.name != "exercises"]


@pytest.mark.parametrize("path", WITH_OUTPUTS,
                         ids=[str(p.relative_to(ROOT / "notebooks")) for p in WITH_OUTPUTS])
def test_every_quoted_number_appears_in_an_output(path):
    name = str(path.relative_to(ROOT / "notebooks"))
    exceptions = EXCEPTIONS.get(name, {})
    found = [f"{path.relative_to(ROOT)}: cell {i}, line {n}: {number} in: {line}"
             for i, n, number, line in unquoted_numbers(_cells(path), exceptions)]
    assert not found, ("print these numbers in an output cell (same rounding), correct the "
                       "text, or list them in EXCEPTIONS with a reason:\n" + "\n".join(found))


def test_exceptions_are_used_and_give_a_one_word_reason():
    for name, table in EXCEPTIONS.items():
        path = ROOT / "notebooks" / name
        assert path.exists(), name
        cells = _cells(path)
        unlisted = {n for _, _, n, _ in unquoted_numbers(cells)}
        for number, reason in table.items():
            assert re.fullmatch(r"[a-z]+", reason), f"{name} {number}: one lower-case word"
            assert number in unlisted, f"{name}: {number} is shown or set by the notebook now"


# ---------------------------------------------------- the corrected statements stay corrected
def _notebook_text(name):
    import json
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / name
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("name, wrong", [
    ("03_reconstruction_attacks.ipynb", "4E is\nthe best possible guarantee"),
    ("03_reconstruction_attacks.ipynb", "4E is the best possible guarantee"),
    ("03_reconstruction_attacks.ipynb", "show with adversarial noise that it is tight"),
    ("03_reconstruction_attacks.ipynb", "tight (decoy noise)"),
    ("01_anonymization_and_its_limits.ipynb", "panel's class 1 of the seed's table"),
    ("05_sensitivity.ipynb", "and divide,\nnotebook 06.)"),
])
def test_corrected_statements_are_gone(name, wrong):
    assert wrong not in _notebook_text(name)


@pytest.mark.parametrize("name, needed", [
    ("03_reconstruction_attacks.ipynb", "at least 2E bits from the truth"),
    ("05_sensitivity.ipynb", "notebook 06, section 6"),
    ("06_laplace_mechanism.ipynb", "## 6. Noisy sums, counts and a mean"),
    ("06_laplace_mechanism.ipynb", "**Note on the source.**"),
    ("06_laplace_mechanism.ipynb", "*Seed 003, eq. 11.*"),
    ("06_laplace_mechanism.ipynb", "*Seed 001*"),
    ("06_laplace_mechanism.ipynb", "*Seed 004, \"Proof (2)\"*"),
])
def test_corrections_are_in_place(name, needed):
    assert needed in _notebook_text(name)
