"""The share of parameter checks in the bodies of the public lesson functions.

    python benchmarks/check_share.py            # the working tree
    python benchmarks/check_share.py --rev REV  # the sources of a commit (git show)

A lesson module is a module of dpteach/ (dpteach/attacks/ included) that is not private
and not machinery (the coursework, the panels, the command line, the notebook and plot
helpers). Its public functions are its top-level functions and the methods of its classes
whose names do not start with "_". Each top-level statement of such a body (the docstring
left out) is a check when it calls a validator (a name starting with ``valid_`` or
``_valid``, or ``finite_result``), or is an ``if`` whose body only raises. Parameters
declared with ``@checked`` are counted apart: they are not in the body. Prints a table per
module and the total; the numbers are what issue 33's closing note compares.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MACHINERY = {"cli", "notebook", "plots", "style", "__main__", "__init__"}
VALIDATORS = ("valid_", "_valid")
NAMED_VALIDATORS = {"finite_result", "_alpha", "_eps_array"}


def lesson_paths(rev):
    """Paths (relative to the repository) of the lesson modules at ``rev`` (None: the
    working tree)."""
    if rev is None:
        paths = [str(p.relative_to(ROOT)) for p in (ROOT / "dpteach").rglob("*.py")]
    else:
        out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "dpteach"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
        paths = [p for p in out.split() if p.endswith(".py")]
    keep = []
    for p in sorted(paths):
        parts = Path(p).with_suffix("").parts[1:]
        if parts[0] in ("coursework", "panels") or parts[-1] in MACHINERY or \
                any(part.startswith("_") for part in parts):
            continue
        keep.append(p)
    return keep


def source(path, rev):
    if rev is None:
        return (ROOT / path).read_text(encoding="utf-8")
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


def _called(node):
    call = node.value if isinstance(node, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
    if not isinstance(call, ast.Call):
        return None
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def is_check(stmt) -> bool:
    """A validator call, or an ``if`` (no else) whose body only raises."""
    name = _called(stmt)
    if name is not None and (name.startswith(VALIDATORS) or name in NAMED_VALIDATORS):
        return True
    return isinstance(stmt, ast.If) and not stmt.orelse and \
        all(isinstance(s, ast.Raise) for s in stmt.body)


def public_functions(tree):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                    yield item


def declared(fn) -> int:
    """Parameters declared by a ``@checked(...)`` decorator of ``fn``."""
    return sum(len(d.keywords) for d in fn.decorator_list
               if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "checked")


def count(rev=None) -> dict:
    """{module path: (functions, statements, checks, declared parameters)}."""
    table = {}
    for path in lesson_paths(rev):
        tree = ast.parse(source(path, rev))
        n_fn = n_st = n_ck = n_decl = 0
        for fn in public_functions(tree):
            body = fn.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                body = body[1:]
            n_fn += 1
            n_st += len(body)
            n_ck += sum(is_check(s) for s in body)
            n_decl += declared(fn)
        if n_fn:
            table[path] = (n_fn, n_st, n_ck, n_decl)
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default=None, help="a git revision (default: the working tree)")
    args = parser.parse_args(argv)
    table = count(args.rev)
    print(f"{'module':36s} {'functions':>9s} {'statements':>10s} {'checks':>6s} "
          f"{'share':>6s} {'declared':>8s}")
    total = [0, 0, 0, 0]
    for path, row in table.items():
        total = [a + b for a, b in zip(total, row)]
        fn, st, ck, decl = row
        print(f"{path:36s} {fn:9d} {st:10d} {ck:6d} {ck / max(st, 1):6.0%} {decl:8d}")
    fn, st, ck, decl = total
    print(f"{'total':36s} {fn:9d} {st:10d} {ck:6d} {ck / max(st, 1):6.0%} {decl:8d}")


if __name__ == "__main__":
    main()
