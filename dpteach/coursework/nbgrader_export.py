"""Export the coursework as an nbgrader course (``make nbgrader NBGRADER_DIR=course``).

The same solution notebooks (``notebooks/solutions/``) that ``make exercises`` blanks are
written in nbgrader's *source* format, ``<dir>/source/A1/A1_anonymity.ipynb`` ..., with a
``nbgrader_config.py`` beside them; ``nbgrader generate_assignment A1`` then makes the
student version and ``nbgrader autograde A1`` grades what comes back.

* a code cell tagged ``solution`` becomes an nbgrader solution cell: its ``# Task``
  header, ``name = None`` for each name later cells read, each top-level function's
  signature and docstring around a ``### BEGIN SOLUTION`` / ``### END SOLUTION`` body,
  and the other statements in such regions (nbgrader replaces every region with
  ``# YOUR CODE HERE`` and ``...``, so the student version matches ``make exercises``);
* a markdown cell tagged ``solution`` (a written answer) becomes a manually graded
  answer cell holding the model answer in a solution region; its points are the
  ``(N points)`` of the task heading above it (1 when there is none);
* a check cell becomes one locked autograder test cell per task it checks, worth the
  task's points (:mod:`dpteach.coursework.assignments`; 1 point for a check without a Task). The
  visible part runs the check and asserts it passed; for a Task with held-out inputs a
  hidden part (``### BEGIN HIDDEN TESTS``) checks it again on a second, independent draw.

nbgrader runs its tests inside the student's kernel, so a notebook that redefines
``dp.assignments.check`` before them can fool it; ``make grade`` (:mod:`dpteach.coursework.grading`)
does not have that weakness (notebooks/README.md compares the two).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import nbformat

from . import student_copies

__all__ = ["export", "source_notebook", "CONFIG", "main"]

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
SCHEMA = 3
CODE_STUB = "# YOUR CODE HERE\n..."

CONFIG = f'''\
# nbgrader configuration of the dpteach coursework (written by `make nbgrader`).
# Source notebooks: source/A1 ... source/A6, generated from notebooks/solutions/;
# edit those and run `make nbgrader` again rather than editing source/ by hand.
c = get_config()  # noqa: F821 (nbgrader provides it)

c.CourseDirectory.course_id = "dpteach"

# a solution region becomes the stub the kit's own exercises use: a function that
# returns None reads as "not yet solved" instead of raising
c.ClearSolutions.code_stub = {{"python": {CODE_STUB!r}}}
c.ClearSolutions.text_stub = {student_copies.WRITTEN_PROMPT!r}

# statistical checks and audits take seconds, not minutes; a looping notebook is stopped
c.Execute.timeout = 300
'''

_POINTS = re.compile(r"\(\s*(\d+)\s*points?\b[^)]*\)", re.IGNORECASE)
_TASK_HEADING = re.compile(r"^#+\s.*\bTask\b", re.MULTILINE)


def _meta(cell, grade_id, *, solution, grade, locked, points=None) -> None:
    nb_meta = {"grade": grade, "solution": solution, "locked": locked,
               "grade_id": grade_id, "schema_version": SCHEMA}
    if grade:
        nb_meta["points"] = points
    tags = [t for t in cell.get("metadata", {}).get("tags", []) if t != student_copies.SOLUTION_TAG]
    cell.metadata = nbformat.NotebookNode({"nbgrader": nb_meta, **({"tags": tags} if tags else {})})


# ------------------------------------------------------------------ solution cells
def solution_source(source: str, keep=None) -> str:
    """A solution code cell with its answer inside nbgrader solution regions (see the
    module docstring); ``keep``: the names later cells read (as for
    :func:`dpteach.coursework.student_copies.blank_source`)."""
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
    except SyntaxError:                           # IPython magics: one region
        return "\n".join([BEGIN, source, END])
    header, first = [], (tree.body[0].lineno - 1 if tree.body else len(lines))
    for line in lines[:first]:
        if student_copies.TASK_LINE.match(line.strip()):
            header.append(line.rstrip())
    leading = [ln for ln in lines[:first] if ln.strip() and ln not in header]

    functions = {n.name for n in tree.body
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    names = [n for n in student_copies.assigned_names(tree.body) if n not in functions]
    if keep is not None and any(n in keep for n in names):
        names = [n for n in names if n in keep]

    out = header + [f"{n} = None" for n in names]
    pending = list(leading)                       # statement lines waiting for a region

    def flush():
        if any(x.strip() for x in pending):
            out.extend([BEGIN, *pending, END])
        pending.clear()

    prev_end = first
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        between = [ln for ln in lines[prev_end:start] if ln.strip()]
        body = getattr(node, "body", None)
        is_function = (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and body and body[0].lineno > node.lineno)
        if is_function:
            if all(x.strip().startswith("#") for x in pending):
                between = [*pending, *between]      # comments only: into the body
                pending.clear()
            flush()
            doc = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                   and isinstance(body[0].value.value, str))
            code_from = body[1].lineno - 1 if doc and len(body) > 1 else body[0].lineno - 1
            signature_to = body[0].end_lineno if doc and len(body) > 1 else body[0].lineno - 1
            out.extend(lines[start:signature_to])
            indent = re.match(r"\s*", lines[code_from]).group(0)
            moved = [indent + ln.strip() for ln in between if ln.strip().startswith("#")]
            out.extend([indent + BEGIN, *moved, *lines[code_from:node.end_lineno],
                        indent + END])
        else:
            pending.extend(between)
            pending.extend(lines[start:node.end_lineno])
        prev_end = node.end_lineno
    pending.extend(ln for ln in lines[prev_end:] if ln.strip())
    flush()
    return "\n".join(out)


# ------------------------------------------------------------------ check cells
def _is_check(call) -> str | None:
    """"assignments" for dp.assignments.check(...), "exercises" for
    dp.exercises.check_*(...), else None."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    owner = call.func.value
    owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    if owner_name == "assignments" and call.func.attr == "check":
        return "assignments"
    if owner_name == "exercises" and call.func.attr.startswith("check_"):
        return "exercises"
    return None


def _checked_call(stmt):
    """The check call a statement makes (``check(...)`` or ``display(check(...))``)."""
    if not isinstance(stmt, ast.Expr):
        return None
    call = stmt.value
    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "display" and len(call.args) == 1):
        call = call.args[0]
    return call if _is_check(call) else None


def _task_key(call) -> str | None:
    if _is_check(call) == "assignments":
        if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant):
            return str(call.args[1].value)
        return None
    for kw in call.keywords:
        if kw.arg == "name" and isinstance(kw.value, ast.Constant):
            return str(kw.value.value)
    return None


def check_cells(source: str) -> list | None:
    """The test cells (key, code, held_out) one check cell becomes, or None when it
    checks no task. Statements before a check go with it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    lines = source.splitlines()
    out, pending = [], []
    for stmt in tree.body:
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        seg = lines[start - 1:stmt.end_lineno]
        call = _checked_call(stmt)
        key = _task_key(call) if call is not None else None
        if key is None or not key.lower().startswith("task"):
            pending.extend(seg)
            continue
        expr = ast.get_source_segment(source, call)
        out.append((key, pending + [f"feedback = {expr}"], _is_check(call) == "assignments", expr))
        pending = []
    if not out:
        return None
    if pending:                                    # statements after the last check
        key, code, held_out, expr = out[-1]
        out[-1] = (key, code + pending, held_out, expr)
    cells = []
    for key, code, held_out, expr in out:
        text = code + ["display(feedback)",
                       "assert feedback.passed, feedback.message"]
        if held_out:
            text += [BEGIN_HIDDEN,
                     "# the same check on a second, independent draw of held-out inputs",
                     f"again = {expr}",
                     "assert again.passed, again.message",
                     END_HIDDEN]
        cells.append((key, "\n".join(text), held_out))
    return cells


# ------------------------------------------------------------------ a notebook
def _task_points(assignment) -> dict:
    from . import assignments

    try:
        return {t.key: t.points for t in assignments.tasks(assignment)}
    except (ImportError, ValueError):
        return {}


def source_notebook(nb, assignment: str):
    """nbgrader's source version of a solution notebook (a new NotebookNode)."""
    out = student_copies.copy_for(nb, assignment)
    points = _task_points(assignment)
    read_later = student_copies.names_read_after(out.cells)
    cells, heading_points = [], None
    for i, cell in enumerate(out.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        cid = cell.get("id") or f"cell{i}"
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if cell.cell_type == "markdown" and _TASK_HEADING.search(cell.source):
            found = _POINTS.search(cell.source)
            heading_points = int(found.group(1)) if found else None
        if student_copies.SOLUTION_TAG in tags:
            if cell.cell_type == "code":
                cell.source = solution_source(cell.source, keep=read_later[i])
                _meta(cell, f"{assignment}-{cid}", solution=True, grade=False, locked=False)
            else:
                cell.source = "\n".join([BEGIN, cell.source, END])
                cell.pop("attachments", None)
                _meta(cell, f"{assignment}-{cid}-written", solution=True, grade=True,
                      locked=False, points=heading_points or 1)
            cells.append(cell)
            continue
        tests = check_cells(cell.source) if cell.cell_type == "code" else None
        if not tests:
            cell.metadata = nbformat.NotebookNode(
                {"tags": tags} if tags else {})
            cells.append(cell)
            continue
        for j, (key, text, _) in enumerate(tests):
            slug = re.sub(r"[^A-Za-z0-9]+", "_", key).strip("_").lower()
            test = nbformat.v4.new_code_cell(text)
            test.id = f"{cid}-{j}" if len(tests) > 1 else cid
            _meta(test, f"{assignment}-{slug}", solution=False, grade=True, locked=True,
                  points=points.get(key, 1))
            cells.append(test)
    out.cells = cells
    return out


def export(course_dir, solutions_dir=None) -> list:
    """Write ``<course_dir>/source/<A>/<notebook>.ipynb`` for every solution notebook
    and ``<course_dir>/nbgrader_config.py``. Returns the notebooks written."""
    course = Path(course_dir)
    _, _, files = student_copies.locate(solutions_dir, None)
    written = []
    for path in files:
        assignment = student_copies.assignment_of(path.name)
        if assignment is None:
            continue
        nb = nbformat.read(path, as_version=4)
        target = course / "source" / assignment / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        for old in target.parent.glob("*.ipynb"):
            if old.name != path.name:
                old.unlink()
        target.write_text(student_copies.render(source_notebook(nb, assignment)), encoding="utf-8")
        written.append(target)
    (course / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpteach.coursework.nbgrader_export",
                                     description="Write the coursework as an nbgrader course "
                                                 "(source/A1 ... and nbgrader_config.py).")
    parser.add_argument("course_dir", help="the nbgrader course folder to write")
    parser.add_argument("--solutions", help="solution notebooks (default notebooks/solutions)")
    args = parser.parse_args(argv)
    for path in export(args.course_dir, args.solutions):
        print(f"wrote {path}")
    print(f"wrote {Path(args.course_dir) / 'nbgrader_config.py'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
