"""The copy of the kit a grading kernel imports: the kit without the answers.

A graded task forbids some kit functions (``dp.global_sensitivity`` while the student
derives a sensitivity). Stubbing those names is not enough: the same result comes back
through a private helper they call (``rdp._log_a_minus_1_int``), a public function that
calls them, or the function the judge computes its truth with. So the set removed is
derived from the code, by a call graph of every top-level function and class of the kit
(:func:`graph`, read from the sources with :mod:`ast`):

1. **seeds**: the functions the group's tasks forbid, and the lesson functions the
   assignment's judges and hidden-input builders call (their truth functions);
2. **closed over the module**: every function or class of a seed's own module that the
   seed calls, directly or not (its private parts);
3. **closed over the callers**: every function or class anywhere in the kit that calls
   something removed, until nothing changes;
4. **the coursework's judge halves**: every function and class of ``dpteach.coursework``
   that no task's ``collect`` reaches, and whole modules that no kept module imports
   (grading, the report, the judges' statistics) refuse to import at all;
5. less what the kernel must keep: what ``collect`` reaches, the classes the hidden
   requests are pickled as, and what the group's tasks declare they need.

:func:`build` writes that copy of ``dpteach/`` into a folder (a removed function keeps
its name and only raises; its body, docstring and defaults are gone), compiled to
bytecode, for the sandbox to mount read-only in place of the real kit.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import hashlib
import os
import pickletools
import shutil
from dataclasses import dataclass, field
from pathlib import Path

#: the kit's package folder
KIT = Path(__file__).resolve().parent.parent
PACKAGE = "dpteach"
COURSEWORK = "dpteach.coursework"

#: what a removed function raises while grading
REMOVED = ("{label} is not available while this assignment is graded: the task is to "
           "compute it yourself")
#: what importing a removed module raises
NO_MODULE = "{module} is not available in a grading kernel"
#: the files of the kit a kernel gets besides its importable modules: the package data
#: pyproject.toml declares for the kit's own packages (an editor's backup, a merge's
#: ``.orig`` or any other copy of a module's source left beside it stays out)
KIT_DATA = ("py.typed", "*.npz")

#: what the grading kernel itself needs of the coursework, whatever the task
ESSENTIALS = (
    "dpteach.coursework.assignments:tasks",
    "dpteach.coursework.assignments._transport:dumps",
    "dpteach.coursework.assignments._transport:encode",
    "dpteach.coursework.assignments:Task",
    "dpteach.coursework._feedback:Feedback",
)
#: modules the grading runner itself runs in the sandbox (they hold no answer)
RUNNER_MODULES = ("dpteach.coursework._grade_runner", "dpteach.coursework._grade_kernel")


@dataclass
class Node:
    """A top-level function, class or assignment of a kit module."""

    module: str
    name: str
    kind: str                      # "def", "class" or "data"
    refs: set = field(default_factory=set)
    #: names a data statement calls as the module is imported
    calls: set = field(default_factory=set)


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    nodes: dict                    # name -> Node
    aliases: dict                  # local name -> ("module", m) or ("name", m, attr)
    imports: set                   # kit modules it imports at its top level


def _module_name(path: Path) -> str:
    rel = path.relative_to(KIT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_package(name: str) -> bool:
    return (KIT.parent / Path(*name.split(".")) / "__init__.py").is_file()


def _is_module(name: str) -> bool:
    if not (name == PACKAGE or name.startswith(PACKAGE + ".")):
        return False
    p = KIT.parent / Path(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _resolve_from(module: str, node: ast.ImportFrom) -> str:
    """The absolute module name of a ``from X import ...`` in ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module):
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def _import_aliases(module: str, stmts) -> tuple:
    """(aliases, kit modules imported) of the import statements ``stmts``."""
    aliases, imported = {}, set()
    for st in stmts:
        if isinstance(st, ast.Import):
            for a in st.names:
                if _is_module(a.name):
                    if a.asname:
                        aliases[a.asname] = ("module", a.name)
                    else:
                        aliases[a.name.split(".")[0]] = ("module", a.name.split(".")[0])
                    imported.add(a.name)
        elif isinstance(st, ast.ImportFrom):
            src = _resolve_from(module, st)
            if not _is_module(src):
                continue
            imported.add(src)
            for a in st.names:
                local = a.asname or a.name
                if _is_module(f"{src}.{a.name}"):
                    aliases[local] = ("module", f"{src}.{a.name}")
                    imported.add(f"{src}.{a.name}")
                else:
                    aliases[local] = ("name", src, a.name)
    return aliases, imported


class _Refs(ast.NodeVisitor):
    """The kit names one top-level definition refers to: ``(module, name)`` pairs, names
    of its own module included; imports inside it count as references."""

    def __init__(self, module: str, aliases: dict, top: set):
        self.module, self.aliases, self.top = module, dict(aliases), top
        self.refs = set()

    def _target(self, value):
        if value[0] == "name":
            self.refs.add((value[1], value[2]))

    def visit_Import(self, node):
        found, _ = _import_aliases(self.module, [node])
        self.aliases.update(found)

    def visit_ImportFrom(self, node):
        found, _ = _import_aliases(self.module, [node])
        self.aliases.update(found)
        for value in found.values():
            self._target(value)

    def visit_Name(self, node):
        if node.id in self.aliases:
            self._target(self.aliases[node.id])
        elif node.id in self.top:
            self.refs.add((self.module, node.id))

    def visit_Attribute(self, node):
        chain, cur = [], node
        while isinstance(cur, ast.Attribute):
            chain.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name) and cur.id in self.aliases and \
                self.aliases[cur.id][0] == "module":
            mod = self.aliases[cur.id][1]
            for attr in reversed(chain):
                if _is_module(f"{mod}.{attr}"):
                    mod = f"{mod}.{attr}"
                    continue
                self.refs.add((mod, attr))
                break
            return
        self.generic_visit(node)


def _parse(path: Path) -> Module:
    name = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_imports = [st for st in tree.body if isinstance(st, (ast.Import, ast.ImportFrom))]
    aliases, imported = _import_aliases(name, top_imports)
    nodes = {}
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nodes[st.name] = Node(name, st.name, "def")
        elif isinstance(st, ast.ClassDef):
            nodes[st.name] = Node(name, st.name, "class")
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        nodes[n.id] = Node(name, n.id, "data")
    top = set(nodes)
    for st in tree.body:
        names = ()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = (st.name,)
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            names = tuple(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        if not names:
            continue
        visitor = _Refs(name, aliases, top)
        visitor.visit(st)
        called = {c.func.id for c in ast.walk(st) if isinstance(st, (ast.Assign, ast.AnnAssign))
                  and isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
        for n in names:
            nodes[n].refs |= {r for r in visitor.refs if r != (name, n)}
            nodes[n].calls |= {(name, c) for c in called if c in top}
    return Module(name, path, tree, nodes, aliases, imported)


@functools.lru_cache(maxsize=4)
def _graph_cached(stamp) -> dict:
    return {m.name: m for m in (_parse(p) for p in sorted(KIT.rglob("*.py"))
                                 if "__pycache__" not in p.parts)}


@functools.lru_cache(maxsize=4)
def _fingerprints(stamp) -> dict:
    """(module, name) -> the source of each top-level function and class, its name left
    out (hashed): a copy of a module's text has the same."""
    out = {}
    for mod in _graph_cached(stamp).values():
        lines = mod.path.read_text(encoding="utf-8").splitlines()
        for st in mod.tree.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                text = "\n".join(lines[st.lineno - 1:st.end_lineno]).replace(st.name, "", 1)
                out[(mod.name, st.name)] = hashlib.sha256(text.encode()).hexdigest()
    return out


def _stamp() -> tuple:
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size)
                 for p in sorted(KIT.rglob("*.py")) if "__pycache__" not in p.parts)


def graph() -> dict:
    """Every kit module (dotted name -> :class:`Module`), from the sources on disk."""
    return _graph_cached(_stamp())


def canonical(mods: dict, module: str, name: str, _depth=0):
    """Where ``module.name`` is defined: ``(module, name)`` of a top-level node, or None
    (not the kit's, or a module)."""
    mod = mods.get(module)
    if mod is None or _depth > 20:
        return None
    node = mod.nodes.get(name)
    if node is not None and not (node.kind == "data" and name in mod.aliases):
        return (module, name)
    alias = mod.aliases.get(name)
    if alias is not None and alias[0] == "name":
        return canonical(mods, alias[1], alias[2], _depth + 1)
    if module == PACKAGE:
        exports = _package_exports(mods)
        if name in exports:
            return canonical(mods, f"{PACKAGE}.{exports[name]}", name, _depth + 1)
    return None


def _package_exports(mods) -> dict:
    """dpteach/__init__.py's top level: each name of its ``CONTRACT`` -> the lesson (a
    module or package just under dpteach) whose ``__all__`` lists it."""
    contract = set(_literal_assigned(mods[PACKAGE].tree, "CONTRACT"))
    out = {}
    for name, mod in mods.items():
        lesson = name[len(PACKAGE) + 1:]
        if not name.startswith(PACKAGE + ".") or "." in lesson or lesson.startswith("_"):
            continue
        for public in _literal_assigned(mod.tree, "__all__"):
            if public in contract:
                out.setdefault(public, lesson)
    return out


def _literal_assigned(tree: ast.Module, target: str) -> list:
    """The strings a module's top level assigns (``=``, ``+=``) to ``target``, where
    they are written out."""
    out = []
    for st in tree.body:
        if isinstance(st, ast.Assign):
            hit = any(isinstance(t, ast.Name) and t.id == target for t in st.targets)
        elif isinstance(st, ast.AugAssign):
            hit = isinstance(st.target, ast.Name) and st.target.id == target
        else:
            hit = False
        if hit and isinstance(st.value, (ast.List, ast.Tuple)):
            out += [e.value for e in st.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return out


def _targets(mods, targets) -> set:
    out = set()
    for t in targets:
        module, name = t.split(":")
        c = canonical(mods, module, name)
        if c is not None:
            out.add(c)
    return out


def _edges(mods) -> dict:
    """(module, name) -> the canonical nodes it refers to."""
    out = {}
    for mod in mods.values():
        for node in mod.nodes.values():
            refs = set()
            for m, n in node.refs:
                c = canonical(mods, m, n)
                if c is not None:
                    refs.add(c)
            out[(mod.name, node.name)] = refs
    return out


def _callees(edges, seeds, within=None) -> set:
    """Everything ``seeds`` reach (``within``: only nodes of that predicate)."""
    seen, todo = set(), list(seeds)
    while todo:
        cur = todo.pop()
        if cur in seen:
            continue
        seen.add(cur)
        for nxt in edges.get(cur, ()):
            if within is None or within(nxt):
                todo.append(nxt)
    return seen


def _is_lesson(module: str) -> bool:
    """A module a notebook teaches (not coursework, not a private support module)."""
    if module.startswith(COURSEWORK) or module == PACKAGE:
        return False
    return not any(part.startswith("_") for part in module.split(".")[1:])


@dataclass(frozen=True)
class Plan:
    """What one grading kernel's kit leaves out: ``removed`` nodes (only raise) and
    ``no_import`` modules (refuse to import)."""

    removed: frozenset
    no_import: frozenset
    kept: frozenset
    #: removed functions the module calls as it is imported (factories of a task's
    #: judge): they return a function that raises, instead of raising
    factories: frozenset = frozenset()


def plan(tasks, forbidden=(), needs=(), pickled=(), allowed=()) -> Plan:
    """The :class:`Plan` for a kernel grading ``tasks`` (those of one assignment; the
    group's forbidden targets and needs as ``"module:name"``; ``pickled``: the
    ``(module, name)`` globals the hidden requests are pickled with; ``allowed``: kit
    functions the assignment lets every task use, which are never taken for a judge's
    truth function)."""
    mods = graph()
    edges = _edges(mods)
    kind = {(m.name, n.name): n.kind for m in mods.values() for n in m.nodes.values()}

    def node_of(fn):
        if fn is None:
            return None
        # a closure made by a top-level factory is reached through that factory
        name = (getattr(fn, "__qualname__", "") or getattr(fn, "__name__", "") or "")
        return canonical(mods, getattr(fn, "__module__", "") or "", name.split(".")[0])

    collects = {node_of(t.collect) for t in tasks} - {None}
    judges = {node_of(f) for t in tasks for f in (t.request, t.judge)} - {None}
    needed = _targets(mods, needs)
    keep_seeds = collects | needed | _targets(mods, allowed) | _targets(mods, ESSENTIALS) | \
        {(m, n) for m in RUNNER_MODULES if m in mods for n in mods[m].nodes} | \
        {c for m, n in pickled if (c := canonical(mods, m, n)) is not None}
    kept = _callees(edges, keep_seeds)
    # the truth functions: lesson functions the judges and request builders reach through
    # the coursework
    in_coursework = _callees(edges, judges, within=lambda n: n[0].startswith(COURSEWORK))
    truth = {r for n in in_coursework for r in edges.get(n, ())
             if _is_lesson(r[0]) and not r[1].startswith("_") and kind.get(r) != "data"}
    seeds = (_targets(mods, forbidden) | (truth - _targets(mods, allowed))) - needed
    removed = set()
    for seed in seeds:         # closed over the seed's own module
        removed |= _callees(edges, [seed], within=lambda n, m=seed[0]: n[0] == m)
    # a forbidden name bound by an assignment (``f = checked(...)(_f)``, an alias) is
    # removed as a function is: it is rewritten to raise
    removed = {n for n in removed if kind.get(n) in ("def", "class") or
               (n in seeds and not n[0].startswith(COURSEWORK))}
    # a copy of a removed function or class elsewhere in the kit (the same code under
    # the same or another name: a module copied beside the original) computes the same
    prints = _fingerprints(_stamp())
    gone = {prints[n] for n in removed if n in prints}
    removed |= {n for n, f in prints.items() if f in gone and not n[0].startswith(COURSEWORK)}
    changed = True
    while changed:             # closed over the callers
        changed = False
        for src, refs in edges.items():
            if src not in removed and kind.get(src) in ("def", "class") and refs & removed:
                removed.add(src)
                changed = True
    # the coursework: only what the kernel needs of it
    for mod in mods.values():
        if mod.name.startswith(COURSEWORK):
            removed |= {(mod.name, n.name) for n in mod.nodes.values()
                        if n.kind in ("def", "class") and (mod.name, n.name) not in kept}
    removed -= kept
    # modules no kept module needs (importing their package's __init__ included)
    importable, todo = set(), [m for m, _ in kept]
    while todo:
        m = todo.pop()
        while m and m not in importable:
            importable.add(m)
            todo += list(mods[m].imports) if m in mods else []
            m = m.rpartition(".")[0]
    no_import = {m for m in mods if m.startswith(COURSEWORK) and m not in importable}
    # a lesson module whose import-time data is computed with something removed
    no_import |= {src[0] for src, refs in edges.items()
                  if kind.get(src) == "data" and refs & removed and src not in removed and
                  not src[0].startswith(COURSEWORK)}
    factories = {c for mod in mods.values() if mod.name.startswith(COURSEWORK)
                 for node in mod.nodes.values() if node.kind == "data"
                 for m, n in node.calls
                 if (c := canonical(mods, m, n)) is not None and c in removed}
    return Plan(frozenset(removed), frozenset(no_import), frozenset(kept),
                frozenset(factories))


def _raising_function(node, label, name=None):
    msg = REMOVED.format(label=label)
    name = node.name if name is None else name
    new = ast.parse(f"def {name}(*args, **kwargs):\n    raise RuntimeError({msg!r})\n").body[0]
    new.decorator_list = []          # no decorator: nothing (no __wrapped__) keeps the body
    return new


def _bound_names(st) -> list:
    """The names an assignment statement binds (``a = b = f(...)``, ``x, y = ...``)."""
    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _factory(node, label):
    msg = REMOVED.format(label=label)
    src = (f"def {node.name}(*args, **kwargs):\n"
           f"    def removed(*args, **kwargs):\n        raise RuntimeError({msg!r})\n"
           f"    return removed\n")
    return ast.parse(src).body[0]


def _raising_class(node, label):
    msg = REMOVED.format(label=label)
    src = (f"class {node.name}:\n    def __init__(self, *args, **kwargs):\n"
           f"        raise RuntimeError({msg!r})\n")
    return ast.parse(src).body[0]


def _label(module, name) -> str:
    return f"{module.replace(PACKAGE, 'dp', 1)}.{name}"


def rewrite(mod: Module, removed, factories=frozenset()) -> str:
    """The source of ``mod`` with the ``removed`` functions and classes raising (the
    ``factories`` among them returning a function that raises)."""
    tree = ast.parse(mod.path.read_text(encoding="utf-8"))
    body = []
    for st in tree.body:
        name = getattr(st, "name", None)
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and any(
                (mod.name, n) in removed for n in _bound_names(st)):
            # every name it binds raises: what it computed came from something removed
            body += [_raising_function(None, _label(mod.name, n), name=n)
                     for n in dict.fromkeys(_bound_names(st))]
            continue
        if (mod.name, name) in removed:
            if isinstance(st, ast.ClassDef):
                body.append(_raising_class(st, _label(mod.name, name)))
            elif (mod.name, name) in factories:
                body.append(_factory(st, _label(mod.name, name)))
            else:
                body.append(_raising_function(st, _label(mod.name, name)))
            continue
        body.append(st)
    tree.body = body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def pickled_globals(blobs) -> set:
    """The ``(module, name)`` globals of the kit that the pickles ``blobs`` refer to."""
    found = set()
    for blob in blobs:
        strings = []
        for op, arg, _ in pickletools.genops(blob):
            if op.name in ("GLOBAL", "INST"):
                module, _, name = str(arg).partition(" ")
                found.add((module, name))
            elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
                strings.append(arg)
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                found.add((strings[-2], strings[-1]))
    return {(m, n) for m, n in found if m == PACKAGE or m.startswith(PACKAGE + ".")}


def build(folder, the_plan: Plan) -> Path:
    """Write the kit for ``the_plan`` under ``folder`` (as ``folder/dpteach``), compiled;
    returns ``folder``. The same plan writes the same bytes."""
    folder = Path(folder)
    mods = graph()
    out = folder / PACKAGE
    by_module = {}
    for m, n in the_plan.removed:
        by_module.setdefault(m, set()).add((m, n))
    for src in sorted(KIT.rglob("*")):
        if "__pycache__" in src.parts or src.is_dir():
            continue
        rel = src.relative_to(KIT)
        if not (all(part.isidentifier() for part in rel.parent.parts) and (
                (src.suffix == ".py" and src.stem.isidentifier()) or
                any(fnmatch.fnmatchcase(src.name, pat) for pat in KIT_DATA))):
            continue                       # not a module a kernel imports, nor its data
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix != ".py":
            shutil.copyfile(src, dst)
            continue
        name = _module_name(src)
        if name in the_plan.no_import:
            dst.write_text(f"raise ImportError({NO_MODULE.format(module=name)!r})\n",
                           encoding="utf-8")
        elif name in by_module:
            dst.write_text(rewrite(mods[name], by_module[name], the_plan.factories),
                           encoding="utf-8")
        else:
            shutil.copyfile(src, dst)
    import compileall
    compileall.compile_dir(str(out), quiet=1, workers=1)
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return folder


def key(the_plan: Plan) -> str:
    """A short name for the plan, with the kit's sources it was made from."""
    text = repr((sorted(the_plan.removed), sorted(the_plan.no_import),
                 sorted(the_plan.factories), _stamp()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
