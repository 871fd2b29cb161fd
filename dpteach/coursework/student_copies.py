"""Generate the exercise notebooks from the worked solutions.

``notebooks/solutions/*.ipynb`` are complete, executed assignments. Every cell that
holds (part of) an answer carries the cell tag ``solution``, once. This module writes
``notebooks/exercises/`` from them:

* a tagged **code** cell becomes a stub: its leading comment lines, a
  ``# YOUR CODE HERE`` line, each top-level function with its signature and docstring
  and a body of ``...`` (so it returns None), and each top-level variable it assigns set
  to ``None``. The grading cells after it then report "not yet solved" instead of
  crashing;
* a tagged **markdown** cell (a written answer) becomes a prompt to write one;
* every output and execution count is cleared, and run-time metadata (timings, widget
  state) is dropped.

Run ``dpteach exercises`` (``make exercises``) in a clone of the repository after editing
a solution; ``dpteach exercises --check`` exits with status 1 when the committed
exercises differ from what would be generated (tests/coursework/test_coursework.py checks the
same). ``python -m dpteach.coursework.student_copies`` [``--check``] does the same; its default
folders, like the command's, are ``notebooks/solutions`` and ``notebooks/exercises``
under the current folder. Handed-in notebooks are graded by :mod:`dpteach.coursework.grading`
(``dpteach grade``, ``make grade``).
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
import sys
from pathlib import Path

import nbformat

__all__ = ["SOLUTION_TAG", "assignment_of", "blank_source", "make_exercise", "generate", "stale",
           "main"]

#: the cell tag that marks an answer cell in a solution notebook
SOLUTION_TAG = "solution"
YOUR_CODE = "# YOUR CODE HERE"
WRITTEN_PROMPT = "✏️ *Your answer here: replace this cell with your explanation.*"
#: the default folders are relative to the current folder (a clone of the repository),
#: never to the installed package, which holds no solutions
_NOTEBOOKS = Path("notebooks")
_KEEP_NB_METADATA = ("kernelspec", "language_info")
TASK_LINE = re.compile(r"#\s*Task\b")
_ASSIGNMENT_NAME = re.compile(r"^(A\d+)(?![0-9])", re.IGNORECASE)


def assignment_of(name) -> str | None:
    """The assignment ("A3") a file name starts with (``A3_sensitivity.ipynb``,
    ``a3-alice.ipynb``), or None."""
    match = _ASSIGNMENT_NAME.match(Path(str(name)).name)
    return match.group(1).upper() if match else None


def assigned_names(body) -> list:
    """Names bound by assignments in ``body`` and in the blocks nested in it (for, if,
    with, try), but not inside functions, classes, lambdas or comprehensions."""
    names = []

    def add(target):
        if isinstance(target, ast.Name):
            if not target.id.startswith("_") and target.id not in names:
                names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add(elt)
        elif isinstance(target, ast.Starred):
            add(target.value)

    def visit(stmts):
        for node in stmts:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    add(t)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                add(node.target)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            else:
                for attr in ("body", "orelse", "finalbody"):
                    visit(getattr(node, attr, []) or [])
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body)
    visit(body)
    return names


def _function_stub(node) -> str:
    """``def name(args):`` with the docstring (if any) and a body of ``...``."""
    head = f"def {node.name}({ast.unparse(node.args)}):"
    if isinstance(node, ast.AsyncFunctionDef):
        head = "async " + head
    lines = [head]
    doc = ast.get_docstring(node, clean=False)
    if doc is not None:
        lines.append('    """' + doc.replace('"""', r'\"\"\"') + '"""')
    lines.append(f"    ...  {YOUR_CODE}")
    return "\n".join(lines)


def blank_source(source: str, keep=None) -> str:
    """The stub that replaces a solution code cell (see the module docstring).

    The cell's leading ``# Task ...`` comment lines are kept (other comments may explain
    the solution and are dropped), then ``# YOUR CODE HERE``, every top-level function
    as a stub, and the variables it assigns set to None -- only those in ``keep`` (the
    names later cells read) when ``keep`` is given and some assigned name is in it.

    >>> print(blank_source("# Task 1: the scale\\n# b = 2\\nb = 1 / 0.5\\nanswer = b * 2"))
    # Task 1: the scale
    # YOUR CODE HERE
    b = None
    answer = None
    >>> print(blank_source("# Task 1: the scale\\nb = 1 / 0.5\\nanswer = b * 2", keep={"answer"}))
    # Task 1: the scale
    # YOUR CODE HERE
    answer = None
    """
    header = []
    for line in source.splitlines():
        text = line.strip()
        if not text:
            continue
        if not text.startswith("#"):
            break
        if TASK_LINE.match(text):
            header.append(line.rstrip())
    try:
        tree = ast.parse(source)
    except SyntaxError:                       # IPython magics etc.: keep the header only
        return "\n".join(header + [YOUR_CODE])
    parts, functions = [], set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.append(_function_stub(node))
            functions.add(node.name)
        elif isinstance(node, ast.ClassDef):
            parts.append(f"class {node.name}:\n    ...  {YOUR_CODE}")
            functions.add(node.name)
    names = [n for n in assigned_names(tree.body) if n not in functions]
    if keep is not None and any(n in keep for n in names):
        names = [n for n in names if n in keep]
    out = header + [YOUR_CODE]
    if parts:
        out.append("\n\n".join(parts))
    if names:
        if parts:
            out.append("")
        out += [f"{n} = None" for n in names]
    return "\n".join(out)


def _tags(cell) -> list:
    return list(cell.get("metadata", {}).get("tags", []))


def names_read_after(cells) -> list:
    """For each cell, the names that the code cells after it read, other than solution
    cells (which are blanked): the variables a grading cell checks."""
    out, seen = [set() for _ in cells], set()
    for i in range(len(cells) - 1, -1, -1):
        out[i] = set(seen)
        cell = cells[i]
        if cell.cell_type == "code" and SOLUTION_TAG not in _tags(cell):
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            seen |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return out


def copy_for(nb, assignment=None):
    """A deep copy of ``nb`` keeping only the notebook metadata in ``_KEEP_NB_METADATA``,
    stamped ``metadata["dpteach"]["assignment"]`` when ``assignment`` is given."""
    out = copy.deepcopy(nb)
    out.metadata = nbformat.NotebookNode({k: out.metadata[k] for k in _KEEP_NB_METADATA
                                          if k in out.metadata})
    if assignment is not None:
        out.metadata["dpteach"] = nbformat.NotebookNode({"assignment": assignment})
    return out


def make_exercise(nb, assignment=None):
    """A blanked copy of a solution notebook (nbformat NotebookNode); the input is
    untouched. ``assignment`` ("A3") is recorded as ``metadata["dpteach"]["assignment"]``
    so that ``make grade`` knows which tasks to grade whatever the student renames the
    file to."""
    out = copy_for(nb, assignment)
    read_later = names_read_after(out.cells)
    for i, cell in enumerate(out.cells):
        meta = nbformat.NotebookNode({"tags": _tags(cell)} if _tags(cell) else {})
        cell.metadata = meta
        is_solution = SOLUTION_TAG in _tags(cell)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            if is_solution:
                cell.source = blank_source(cell.source, keep=read_later[i])
        elif cell.cell_type == "markdown" and is_solution:
            cell.source = WRITTEN_PROMPT
            cell.pop("attachments", None)
    return out


def render(nb) -> str:
    """The notebook as the text written to disk (nbformat 4, ending in a newline)."""
    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


def locate(solutions_dir, exercises_dir):
    """(solutions folder, exercises folder, the solution notebooks in it); the folders
    default to ``notebooks/solutions`` and ``notebooks/exercises`` under the current one."""
    sol = Path(solutions_dir) if solutions_dir is not None else _NOTEBOOKS / "solutions"
    exe = Path(exercises_dir) if exercises_dir is not None else _NOTEBOOKS / "exercises"
    files = sorted(sol.glob("*.ipynb"))
    if not files:
        raise FileNotFoundError(f"no solution notebooks (*.ipynb) in {sol}")
    return sol, exe, files


def _expected(files, exe) -> dict:
    out = {}
    for path in files:
        nb = nbformat.read(path, as_version=4)
        if not any(SOLUTION_TAG in _tags(c) for c in nb.cells):
            raise ValueError(f"{path.name} has no cell tagged {SOLUTION_TAG!r}")
        out[exe / path.name] = render(make_exercise(nb, assignment_of(path.name)))
    return out


def generate(solutions_dir=None, exercises_dir=None) -> list:
    """Write one exercise notebook per solution notebook; remove exercise notebooks
    whose solution is gone. Returns the paths written."""
    _, exe, files = locate(solutions_dir, exercises_dir)
    expected = _expected(files, exe)
    exe.mkdir(parents=True, exist_ok=True)
    for old in exe.glob("*.ipynb"):
        if old not in expected:
            old.unlink()
    for path, text in expected.items():
        path.write_text(text, encoding="utf-8")
    return list(expected)


def stale(solutions_dir=None, exercises_dir=None) -> list:
    """Names of exercise notebooks that are missing, extra or differ from what
    :func:`generate` would write (an empty list when everything is up to date)."""
    _, exe, files = locate(solutions_dir, exercises_dir)
    expected = _expected(files, exe)
    bad = [p.name for p, text in expected.items()
           if not p.exists() or p.read_text(encoding="utf-8") != text]
    bad += [p.name for p in exe.glob("*.ipynb") if p not in expected]
    return sorted(bad)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpteach.coursework.student_copies",
                                     description="Generate notebooks/exercises/ from "
                                                 "notebooks/solutions/ by blanking the cells "
                                                 f"tagged {SOLUTION_TAG!r}.")
    parser.add_argument("--solutions", help="solution notebooks folder "
                                            "(default: notebooks/solutions)")
    parser.add_argument("--exercises", help="exercise notebooks folder "
                                            "(default: notebooks/exercises)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the exercises are out of date")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale(args.solutions, args.exercises)
        for name in bad:
            print(f"out of date: {name}")
        if not bad:
            print("exercises are up to date")
        return 1 if bad else 0
    for path in generate(args.solutions, args.exercises):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
