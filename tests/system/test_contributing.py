"""CONTRIBUTING.md names only what exists: every repository path, `make` target, `dp.`
name, pytest option, kit function and signature written in backticks is checked against
the files on disk, so a rename that leaves the guide behind fails here. The four recipes,
the naming glossary and the house rules must be there.

Read from the sources only (no import of the kit's heavy modules), so the file runs in
well under a second. Names that do not exist yet on purpose are written as placeholders:
``<...>`` (``dpteach/coursework/assignments/a11_<topic>.py``), the recipe's new assignment
A11, or a name the glossary proposes (:data:`PROPOSED`)."""

from __future__ import annotations

import ast
import functools
import keyword
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "CONTRIBUTING.md"

#: the headings a newcomer looks for (``## `` level), each recipe a numbered list
RECIPES = ("Recipe: a lesson function", "Recipe: a panel", "Recipe: an assignment",
           "Recipe: a statistical test")
SECTIONS = RECIPES + ("The naming glossary", "House rules")
#: names the glossary asks for that the code does not have yet (remove one once it does)
PROPOSED = {"sampling_rate", "group_size", "n_categories"}
#: the folders a backticked path may start with, and where bare file names are looked for
FOLDERS = ("dpteach", "tests", "notebooks", "benchmarks", "docs")
#: the recipe's new assignment: its files are to be written, their folders must exist
NEW = re.compile(r"<[^>]*>|(?<![A-Za-z0-9])[Aa]11(?![0-9])")

SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(rf"(?<![\w/.])(?:{'|'.join(FOLDERS)})/[\w./<>*-]*")
BARE_FILE = re.compile(r"^[\w<>-]+\.(?:py|ipynb)$")
MAKE = re.compile(r"(?<![\w-])make ([a-z][\w-]*)")
DP = re.compile(r"(?<![\w.])dp\.([\w.<>]+)")
OPTION = re.compile(r"(?<![\w-])--[a-z][\w-]*")
IDENT = re.compile(r"^\"?([A-Za-z_]\w*)\"?$")
DOTTED = re.compile(r"^([a-z_]\w*(?:\.\w+)+)$")
CALL = re.compile(r"^(?:def )?(?:dp\.)?([\w.]+)\((.*)\)$")
TARGET = re.compile(r"^\"(dpteach(?:\.\w+)*):(\w+)\"$")


def spans(text):
    return SPAN.findall(text)


@functools.lru_cache(maxsize=None)
def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def _code_words() -> frozenset:
    """Every word of the package's, the tests' and the benchmarks' Python sources."""
    words = set()
    for folder in ("dpteach", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name != "test_contributing.py":
                words.update(re.findall(r"\w+", _source(path)))
    return frozenset(words)


def _module_file(parts):
    """The file of the dpteach module ``parts`` (``("attacks", "reconstruction")``)."""
    base = ROOT.joinpath("dpteach", *parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.lru_cache(maxsize=None)
def _defs(path: Path) -> dict:
    """name -> argument names (None for a non-function) of what a module defines at its
    top level, the methods of its classes as ``Class.method``."""
    tree = ast.parse(_source(path))
    out = {}

    def args(node):
        a = node.args
        return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs] + (["**"] if a.kwarg else [])

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = args(node)
        elif isinstance(node, ast.ClassDef):
            fields = [sub.target.id for sub in node.body
                      if isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name)]
            out[node.name] = fields or None               # a dataclass: its fields
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{sub.name}"] = args(sub)
                    if sub.name == "__init__":           # a class: its constructor's
                        out[node.name] = args(sub)[1:]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out[n.id] = None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = None
    return out


def resolve(dotted):
    """(file, name) for ``module.name`` or ``module.Class.method`` under dpteach, the
    longest module prefix first; None when nothing defines it."""
    parts = dotted.split(".")
    if parts[0] == "dpteach":
        parts = parts[1:]
    for i in range(len(parts) - 1, 0, -1):
        path = _module_file(parts[:i])
        if path is not None:
            name = ".".join(parts[i:])
            return (path, name) if name in _defs(path) else None
    return None


@functools.lru_cache(maxsize=None)
def _package_sources() -> tuple:
    return tuple((path, _source(path)) for path in sorted((ROOT / "dpteach").rglob("*.py")))


def functions_named(name) -> list:
    """The argument lists of every function, method (``self`` left out) or class
    (its ``__init__``'s, or a dataclass's fields) called ``name`` in the package; only the
    files whose text defines it are parsed."""
    pattern = re.compile(rf"^(\s*)(?:def|class) {re.escape(name)}\b", re.M)
    out = []
    for path, text in _package_sources():
        if not pattern.search(text):
            continue
        for key, argnames in _defs(path).items():
            if argnames is not None and (key == name or key.endswith(f".{name}")):
                out.append([a for a in argnames if a != "self"])
    return out


# ------------------------------------------------------------------ the checks
def path_problems(text):
    out = []
    for span in spans(text):
        for raw in PATH.findall(span):
            path = raw.rstrip(".,;:)")
            if NEW.search(path):                 # to be written: its folder must exist
                folder = NEW.split(path)[0].rsplit("/", 1)[0]
                if not (ROOT / folder).is_dir():
                    out.append(f"no folder {folder}/ for {path}")
            elif "*" in path:
                if not list(ROOT.glob(path)):
                    out.append(f"nothing matches {path}")
            elif not (ROOT / path).exists():
                out.append(f"no such path: {path}")
        if BARE_FILE.match(span) and not NEW.search(span):
            if not any(any((ROOT / f).rglob(span)) for f in FOLDERS):
                out.append(f"no file named {span} in {', '.join(FOLDERS)}")
    return out


def make_problems(text, makefile=None):
    makefile = _source(ROOT / "Makefile") if makefile is None else makefile
    targets = set(re.findall(r"^([\w-]+)\s*:(?!=)", makefile, re.M))
    return [f"no make target {t!r} in the Makefile" for span in spans(text)
            for t in MAKE.findall(span) if t not in targets]


def dp_problems(text):
    """Each ``dp.a.b`` resolves: ``a`` is in the package's namespace (a name of its
    ``CONTRACT``, a module of ``_SUBMODULES`` or a name its ``__init__`` defines), and what
    follows is defined by that module's source (``dp.notebook.show_source``,
    ``dp.assignments.check``); a contract name is defined by the lesson whose ``__all__``
    lists it."""
    import dpteach

    tree = ast.parse(_source(ROOT / "dpteach" / "__init__.py"))
    contract = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == "CONTRACT":
                contract = set(ast.literal_eval(node.value))
    submodules = _submodules(tree)
    exports = {name: submodules[lessons[0]] for name, lessons in dpteach._homes().items()
               if name in contract and len(lessons) == 1}
    out = []
    for span in spans(text):
        for chain in DP.findall(span):
            parts = [p for p in chain.split(".") if p]
            cut = next((i for i, p in enumerate(parts) if "<" in p), len(parts))
            parts = parts[:cut]
            if not parts:
                continue
            first, rest = parts[0], parts[1:]
            if first in exports:
                module = exports[first].split(".")
                found = resolve(".".join(module + [first] + rest))
            elif first in submodules:
                module = submodules[first].split(".")
                found = True if not rest else resolve(".".join(module + rest))
            else:
                found = first in _defs(ROOT / "dpteach" / "__init__.py")
            if not found:
                out.append(f"dpteach has no attribute {'.'.join(parts)}")
    return out


def _submodules(tree):
    """``_SUBMODULES`` of the package's ``__init__``: the names of its tuple mapped to
    themselves, then its ``.update(...)`` keywords."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.DictComp):
            for gen in node.generators:
                if isinstance(gen.iter, ast.Tuple):
                    out.update({e.value: e.value for e in gen.iter.elts})
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "update" and getattr(node.func.value, "id", "") == "_SUBMODULES"):
            out.update({k.arg: k.value.value for k in node.keywords})
    return out


def option_problems(text):
    """pytest options are registered in tests/conftest.py; the ``dpteach`` command's
    options are declared by its argument parser (dpteach/coursework/cli.py)."""
    conftest = _source(ROOT / "tests" / "conftest.py")
    registered = set(re.findall(r"addoption\(\s*\"(--[\w-]+)\"", conftest))
    cli = _source(ROOT / "dpteach" / "coursework" / "cli.py")
    declared = set(re.findall(r"add_argument\(\s*\"(--[\w-]+)\"", cli))
    out = []
    for span in spans(text):
        if "pytest" in span:
            out += [f"pytest option {o} is not registered in tests/conftest.py"
                    for o in OPTION.findall(span) if o not in registered]
        elif span.startswith("dpteach "):
            out += [f"dpteach has no option {o} (dpteach/coursework/cli.py)"
                    for o in OPTION.findall(span) if o not in declared]
    return out


def name_problems(text):
    """Backticked names and calls exist: a bare identifier is a word of the code; a
    dotted ``module.name`` is defined by that dpteach module; ``name(arg, ...)`` is a
    function of the package taking every argument written; ``"dpteach.module:name"`` is
    defined by the module."""
    words = _code_words()
    out = []
    for span in spans(text):
        if NEW.search(span):
            continue
        if m := TARGET.match(span):
            module, name = m.groups()
            if not resolve(f"{module}.{name}"):
                out.append(f"{module} defines no {name}")
        elif m := IDENT.match(span):
            name = m.group(1)
            if name not in words and name not in PROPOSED:
                out.append(f"no code has the name {name}")
        elif DOTTED.match(span) and not PATH.search(span):
            if _ours(span) and not span.endswith((".py", ".ipynb", ".md")) and not resolve(span):
                out.append(f"no dpteach module defines {span}")
        elif (m := CALL.match(span)) and not span.startswith("dp."):   # dp.: dp_problems
            name, written = m.groups()
            if "." not in name and name not in words:
                out.append(f"no code has the name {name}")
                continue
            known = _call_args(name)
            if known is None:
                continue
            if known == []:
                out.append(f"no function {name} in dpteach")
                continue
            args = [a.split("=")[0].strip() for a in written.split(",")]
            args = [a for a in args if a.isidentifier() and not keyword.iskeyword(a)]
            if not any(set(args) <= set(k) or "**" in k for k in known):
                out.append(f"{name} takes {[a for a in known[0] if a != '**']}, not all of {args}")
    return out


def _ours(dotted) -> bool:
    """Whether a dotted name starts with dpteach or one of its modules (not numpy.)."""
    first = dotted.split(".")[0]
    return first == "dpteach" or _module_file([first]) is not None


def _call_args(name):
    """The argument lists a package function of this name takes; [] when the package has
    no such function; None when the name is not the package's to check (a class such as
    ``Panel`` or ``Task``, a nested function such as a panel's ``update``, numpy's)."""
    if "." in name:
        if not _ours(name):
            return None
        found = resolve(name)
        if found is None:
            return []
        argnames = _defs(found[0])[found[1]]
        return None if argnames is None else [argnames]
    return functions_named(name) or None


def heading_problems(text):
    """The sections are there, each recipe a numbered list, the glossary a table with its
    rows; and no backticked name runs over a line end (the checks read spans line by line,
    and an odd backtick would pair every later one wrongly)."""
    headings = re.findall(r"^## (.+)$", text, re.M)
    out = [f"no '## {h}' heading" for h in SECTIONS if h not in headings]
    out += [f"line {i}: a backticked name runs over the line end" for i, line in
            enumerate(text.splitlines(), 1) if line.count("`") % 2 and not line.startswith("```")]
    for recipe in RECIPES:
        if recipe in headings:
            body = text.split(f"## {recipe}", 1)[1].split("\n## ", 1)[0]
            steps = re.findall(r"^(\d+)\. ", body, re.M)
            if steps[:3] != ["1", "2", "3"]:
                out.append(f"{recipe}: no numbered list of steps")
    if "The naming glossary" in headings:
        body = text.split("## The naming glossary", 1)[1].split("\n## ", 1)[0]
        rows = [r for r in body.splitlines() if r.startswith("|") and "---" not in r]
        for needed in ("parameter order", "`size`", "`rng`", "sampling rate", "neighbours",
                       "randomized response", "epsilon", "delta", "sensitivity"):
            if not any(r.split("|")[1].strip().startswith(needed) for r in rows[1:]):
                out.append(f"the glossary has no row for {needed}")
    return out


ALL_CHECKS = (path_problems, make_problems, dp_problems, option_problems, name_problems,
              heading_problems)


# ------------------------------------------------------------------ the tests
def test_the_guide_names_only_what_exists():
    text = _source(GUIDE)
    problems = [p for check in ALL_CHECKS for p in check(text)]
    assert not problems, "CONTRIBUTING.md is out of date:\n" + "\n".join(problems)


def test_the_checks_see_what_does_not_exist():
    """Each check fails on a wrong name, and passes the right one beside it."""
    assert path_problems("`dpteach/no_such_module.py` and `dpteach/mechanisms.py`") == [
        "no such path: dpteach/no_such_module.py"]
    assert path_problems("`dpteach/lessons/a11_<topic>.py`") == [
        "no folder dpteach/lessons/ for dpteach/lessons/a11_<topic>.py"]
    assert path_problems("`no_such_file.py`, `a3_laplace.py`") == [
        "no file named no_such_file.py in dpteach, tests, notebooks, benchmarks, docs"]
    assert make_problems("`make test`, `make teest`", "test: x\n") == [
        "no make target 'teest' in the Makefile"]
    assert dp_problems("`dp.laplace_mechanism`, `dp.notebook.show_source`, "
                       "`dp.show_source`, `dp.panels.<name>()`") == [
        "dpteach has no attribute show_source"]
    assert dp_problems("`dp.mechanisms.privacy_loss`, `dp.privacy_loss`") == [
        "dpteach has no attribute privacy_loss"]
    assert option_problems("`pytest --seed-shift 3`, `pytest --seed-shfit 3`, "
                           "`dpteach exercises --check`") == [
        "pytest option --seed-shfit is not registered in tests/conftest.py"]
    assert name_problems("`valid_epsilon`, `valid_epsilonn`, `sampling_rate`") == [
        "no code has the name valid_epsilonn"]
    assert name_problems("`sgd.dp_sgd`, `sgd.dp_sdg`, `np.random.default_rng(7)`") == [
        "no dpteach module defines sgd.dp_sdg"]
    assert name_problems("`dp.style.lecture_mode(False)`, `clipped_meen(values)`") == [
        "no code has the name clipped_meen"]
    assert name_problems("`Panel(controls, figure, update, title=...)`, "
                         "`compose_gaussian(sigma, *, q=1.0)`, `Panel(controls, fig, update)`") == [
        "Panel takes ['controls', 'figure', 'update', 'title', 'full_draw_on_move'], "
        "not all of ['controls', 'fig', 'update']"]
    assert name_problems("`laplace_mechanism(value, sensitivity, epsilon, *, rng=None)`, "
                         "`laplace_mechanism(value, epsilon, *, seed=None)`") == [
        "laplace_mechanism takes ['value', 'sensitivity', 'epsilon', 'rng', 'size'], not all "
        "of ['value', 'epsilon', 'seed']"]
    assert name_problems('`"dpteach.sensitivity:global_sensitivity"`, '
                         '`"dpteach.sensitivity:global_sensitivty"`') == [
        "dpteach.sensitivity defines no global_sensitivty"]
    assert heading_problems("## Recipe: a panel\n1. a\n2. b\n3. c\n") != []
    assert "line 2: a backticked name runs over the line end" in heading_problems(
        "## Recipe: a panel\n1. `dp.assignments.check(\n2. x)` b\n3. c\n")
