"""A Sphinx extension: show the package's docstrings as their authors laid them out.

The docstrings are written to read well as plain text (``help(dp.laplace_mechanism)`` in a
notebook): ``|x|`` is an absolute value, formulas are laid out in indented columns, and a
few functions have a numpy-style ``Parameters`` list. reStructuredText reads some of that
differently, so before autodoc renders a docstring this rewrites, without changing a word:

- ``|`` outside ````literal```` text is escaped (it is not a substitution);
- a formula is typeset: an indented block whose every line is a formula of the kit's
  plain-text notation becomes ``.. math::``, and a formula inside a sentence
  (``e^eps / (1 + e^eps)``, ``ε√(2k ln(1/δ'))``) becomes ``:math:``, both translated
  into LaTeX by ``docs/plainmath.py``; every other indented block (a table, cases in words,
  code) stays a literal block, shown exactly as written, and so does a paragraph laid out
  as a table of aligned columns (``bias     = ...``);
- a list that starts right under a paragraph line gets the blank line reST needs;
- a ``Parameters`` / ``Returns`` / ``Examples`` heading underlined with dashes becomes a
  rubric, and the ``name : meaning`` lines of a parameter list become a bullet list;
- a plain dict or list constant does not inherit its type's docstring.
"""

from __future__ import annotations

import inspect
import re

import plainmath  # docs/plainmath.py

_LITERAL = re.compile(r"(``.+?``|:math:`[^`]*`)")
_HEADING_UNDERLINE = re.compile(r"^-{3,}\s*$")
_LIST_ITEM = re.compile(r"^([-*+]|\d+[.)])\s")
#: the first line of a table whose columns are aligned with spaces: ``name     = ...``
_ALIGNED = re.compile(r"^\S+ {2,}(=|->) ")
_FIELD_SECTIONS = {"Parameters", "Other Parameters", "Attributes", "Keyword Arguments"}


def escape_bars(line: str) -> str:
    """Escape ``|`` outside double-backquoted literals and ``:math:`` roles."""
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else p.replace("|", r"\|") for i, p in enumerate(parts))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_structure(line: str) -> bool:
    """Lines that already open reST structure (fields, lists, directives, doctests)."""
    stripped = line.lstrip()
    return (stripped.startswith((":", ".. ", ">>>", "|")) or _LIST_ITEM.match(stripped) is not None
            or line.rstrip().endswith("::"))


def numpy_sections(lines: list[str]) -> list[str]:
    """``Parameters`` + dashes -> a rubric; its ``name : meaning`` lines -> bullets."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        heading = line.strip()
        if heading and _indent(line) == 0 and _HEADING_UNDERLINE.match(nxt) \
                and len(nxt.strip()) == len(heading):
            if out and out[-1].strip():
                out.append("")
            out += [f".. rubric:: {heading}", ""]
            i += 2
            if heading in _FIELD_SECTIONS:
                while i < len(lines) and lines[i].strip():
                    item = lines[i]
                    out.append("  " + item.strip() if _indent(item) else "- " + item)
                    i += 1
                out.append("")
            continue
        out.append(line)
        i += 1
    return out


def literal_blocks_and_lists(lines: list[str], parameters=()) -> list[str]:
    """Indented blocks under a top-level paragraph become literal blocks; a list right
    under a paragraph line is separated from it by a blank line."""
    out: list[str] = []
    i = 0
    in_list = False
    while i < len(lines):
        line = lines[i]
        prev = out[-1] if out else ""
        if not line.strip():
            in_list = False
            out.append(line)
            i += 1
            continue
        # a paragraph laid out as a table of aligned columns ("bias     = ...")
        if not prev.strip() and _indent(line) == 0 and _ALIGNED.match(line) and \
                i + 1 < len(lines) and lines[i + 1].strip():
            out += ["::", ""]
            while i < len(lines) and lines[i].strip():
                out.append("    " + lines[i])
                i += 1
            out.append("")
            continue
        # a list starting right under a paragraph, or a paragraph right under a list
        if _indent(line) == 0 and _LIST_ITEM.match(line):
            if prev.strip() and not in_list and not _is_structure(prev):
                out.append("")
            in_list = True
            out.append(line)
            i += 1
            continue
        if in_list and _indent(line) == 0:
            out.append("")
            in_list = False
        # an indented block under a top-level paragraph line (or under "...:" and a blank)
        under_paragraph = prev.strip() and _indent(prev) == 0 and not _is_structure(prev)
        before_blank = (not prev.strip() and len(out) >= 2 and out[-2].rstrip().endswith(":")
                        and _indent(out[-2]) == 0 and not _is_structure(out[-2]))
        if not in_list and _indent(line) > 0 and (under_paragraph or before_blank):
            block = []
            while i < len(lines) and (_indent(lines[i]) > 0 or not lines[i].strip()):
                if not lines[i].strip() and (i + 1 >= len(lines) or _indent(lines[i + 1]) == 0):
                    break
                block.append(lines[i])
                i += 1
            if under_paragraph:
                out.append("")
            formulas = formula_block(block, parameters)
            if formulas is not None:
                out += [".. math::", ""]
                for latex in formulas:
                    out += [f"   {latex}", ""]
                continue
            text = out[-2].rstrip()  # the paragraph line, above the blank line
            out[-2] = text[:-1] + "::" if text.endswith(":") else text + " ::"
            out += block + [""]
            continue
        out.append(line)
        i += 1
    return out


def formula_block(block: list[str], parameters=()) -> list[str] | None:
    """The LaTeX of each line of an indented block when every line is a formula, else
    None (the block is then shown as a literal block)."""
    lines = [line.strip() for line in block if line.strip()]
    if not lines:
        return None
    try:
        return [plainmath.translate_formula(line, parameters) for line in lines]
    except plainmath.NotMath:
        return None


#: text reST already marks up, where a formula is never looked for
_MARKED = re.compile(r"``.+?``|:[\w:.-]+:`[^`]*`|`[^`]*`_{0,2}|https?://\S+|<[^<>\s]+>"
                     r"|(?<![\w*])\*\*?[^\s*](?:[^*]*?[^\s*])?\*\*?(?![\w*])", re.DOTALL)
#: what reST accepts just before and just after inline markup
_BEFORE = set(" \n\t'\"([{<-/:") | {"‘", "“", "«"}
_AFTER = set(" \n\t'\")]}>-/:.,;!?\\") | {"’", "”", "»"}


def inline_maths(text: str, parameters=()) -> str:
    """Every formula of a paragraph's text (outside reST's own markup) as ``:math:``."""
    out, pos = [], 0
    for m in list(_MARKED.finditer(text)) + [None]:
        end = m.start() if m else len(text)
        segment = text[pos:end]
        last = 0
        for start, stop, latex in plainmath.find_formulas(segment, parameters):
            before = segment[start - 1] if start else (text[pos - 1] if pos else " ")
            after = segment[stop] if stop < len(segment) else (text[end] if end < len(text) else " ")
            if before not in _BEFORE or after not in _AFTER:
                continue  # reST would not see the role: leave the plain text
            out.append(segment[last:start] + f":math:`{latex}`")
            last = stop
        out.append(segment[last:])
        if m:
            out.append(m.group())
            pos = m.end()
    return "".join(out)


def typeset(lines: list[str], parameters=()) -> list[str]:
    """Formulas in the paragraphs as ``:math:``; literal blocks, directives (``.. math::``
    among them) and doctests untouched; ``|`` escaped in the text."""
    out: list[str] = []
    paragraph: list[str] = []

    def flush():
        if paragraph:
            joined = inline_maths("\n".join(paragraph), parameters)
            out.extend(escape_bars(line) for line in joined.split("\n"))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        verbatim = stripped.startswith((".. ", ">>>")) or \
            (line.rstrip().endswith("::") and not stripped.startswith(".."))
        if not stripped:
            flush()
            out.append(line)
            i += 1
        elif stripped.startswith(">>>"):
            flush()
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
        elif verbatim:
            if stripped.startswith(".. "):
                flush()
                out.append(line)
            else:  # "text::": the text is a paragraph, what follows is literal
                paragraph.append(line)
                flush()
            base = _indent(line)
            i += 1
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
                out.append(lines[i])
                i += 1
        else:
            paragraph.append(line)
            i += 1
    flush()
    return out


def clean(lines: list[str], parameters=()) -> list[str]:
    """A docstring's lines as reST; ``parameters`` (the documented function's parameter
    names) may appear in its formulas."""
    lines = literal_blocks_and_lists(numpy_sections(list(lines)), parameters)
    return typeset(lines, parameters)


def parameter_names(obj) -> tuple[str, ...]:
    """The parameter names of a function, or of a class's constructor; () for the rest."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    if not callable(target):
        return ()
    try:
        return tuple(p for p in inspect.signature(target).parameters if p not in ("self", "cls"))
    except (TypeError, ValueError):
        return ()


#: a page whose docstrings these files rewrote is read again when either file changes
_OWN_FILES = (__file__, plainmath.__file__)


def _process(app, what, name, obj, options, lines):
    for path in _OWN_FILES:
        app.env.note_dependency(path)
    type_doc = getattr(type(obj), "__doc__", None)
    if what in ("data", "attribute") and lines and isinstance(type_doc, str) and \
            "\n".join(lines).strip() == inspect.cleandoc(type_doc).strip():
        lines[:] = []  # a plain dict or list: its type's docstring says nothing about it
        return
    lines[:] = clean(lines, parameter_names(obj))


def setup(app):
    app.connect("autodoc-process-docstring", _process)
    # env_version: raised when what this extension writes changes, so that a build made
    # before (docs/_build from an earlier `make docs`) reads every page again
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
