"""Reading a committed notebook's JSON in a test: its markdown, its code and the text of
its stored outputs, by short name ("12" for notebooks/12_*.ipynb, "A9" for the solution
of assignment A9, or its student copy with ``student=True``)."""

import functools
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


@functools.lru_cache(maxsize=None)
def notebook(name, *, student=False):
    folder = NOTEBOOKS / ("exercises" if student else "solutions") if name.startswith("A") \
        else NOTEBOOKS
    (path,) = folder.glob(f"{name}_*.ipynb")
    return nbformat.read(path, as_version=4)


def markdown(name):
    return "\n\n".join(c.source for c in notebook(name).cells if c.cell_type == "markdown")


def code(name, *, student=False):
    return "\n\n".join(c.source for c in notebook(name, student=student).cells
                       if c.cell_type == "code")


def section(name, heading):
    """The markdown of the section whose '## ' heading starts with ``heading``."""
    out, on = [], False
    for c in notebook(name).cells:
        if c.cell_type != "markdown":
            continue
        if c.source.startswith("## "):
            on = c.source[3:].startswith(heading)
        if on:
            out.append(c.source)
    assert out, f"no section {heading!r} in {name}"
    return "\n\n".join(out)


def outputs(name):
    """The text of every stored output: streams, and each text/* representation."""
    parts = []
    for c in notebook(name).cells:
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            if "text" in o:
                parts.append(o["text"])
            for mime, v in o.get("data", {}).items():
                if mime.startswith("text/"):
                    parts.append(v if isinstance(v, str) else "".join(v))
    return "\n".join(parts)


def flat(text):
    """``text`` with every run of white space one space."""
    return " ".join(text.split())
