"""A Sphinx extension: show the package's docstrings as their authors laid them out.

The docstrings are written to read well as plain text (``help(dp.laplace_mechanism)`` in a
notebook): ``|x|`` is an absolute value, formulas are laid out in indented columns, and a
few functions have a numpy-style ``Parameters`` list. reStructuredText reads some of that
differently, so before autodoc renders a docstring this rewrites, without changing a word:

- ``|`` outside ````literal```` text is escaped (it is not a substitution);
- an indented block under a paragraph line (a formula, a table of cases) becomes a literal
  block, shown exactly as written;
- a list that starts right under a paragraph line gets the blank line reST needs;
- a ``Parameters`` / ``Returns`` / ``Examples`` heading underlined with dashes becomes a
  rubric, and the ``name : meaning`` lines of a parameter list become a bullet list;
- a plain dict or list constant does not inherit its type's docstring.
"""

from __future__ import annotations

import inspect
import re

_LITERAL = re.compile(r"(``.+?``)")
_HEADING_UNDERLINE = re.compile(r"^-{3,}\s*$")
_LIST_ITEM = re.compile(r"^([-*+]|\d+[.)])\s")
_FIELD_SECTIONS = {"Parameters", "Other Parameters", "Attributes", "Keyword Arguments"}


def escape_bars(line: str) -> str:
    """Escape ``|`` outside double-backquoted literals."""
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


def literal_blocks_and_lists(lines: list[str]) -> list[str]:
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
            target = len(out) - 1 if under_paragraph else len(out) - 2
            text = out[target].rstrip()
            out[target] = text[:-1] + "::" if text.endswith(":") else text + " ::"
            if under_paragraph:
                out.append("")
            while i < len(lines) and (_indent(lines[i]) > 0 or not lines[i].strip()):
                if not lines[i].strip() and (i + 1 >= len(lines) or _indent(lines[i + 1]) == 0):
                    break
                out.append(lines[i])
                i += 1
            out.append("")
            continue
        out.append(line)
        i += 1
    return out


def clean(lines: list[str]) -> list[str]:
    lines = literal_blocks_and_lists(numpy_sections(list(lines)))
    return [escape_bars(line) for line in lines]


def _process(app, what, name, obj, options, lines):
    type_doc = getattr(type(obj), "__doc__", None)
    if what in ("data", "attribute") and lines and isinstance(type_doc, str) and \
            "\n".join(lines).strip() == inspect.cleandoc(type_doc).strip():
        lines[:] = []  # a plain dict or list: its type's docstring says nothing about it
        return
    lines[:] = clean(lines)


def setup(app):
    app.connect("autodoc-process-docstring", _process)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
