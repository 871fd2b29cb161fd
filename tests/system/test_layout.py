"""The package's layout, locked in: a student who opens the module a notebook names
reads it in one sitting and finds the maths; the top level of dpteach/ holds the lessons
and a few named helpers, what they share lives in the private package ``_support/`` and
the machinery in private modules of its own wing; panels
only draw and wire; names do not clash; every name has one home (no compatibility
aliases, no module ``__getattr__`` hooks, no import circles)."""

import ast
import importlib
import inspect
import pathlib
import pkgutil

import pytest
from scipy import stats

import dpteach as dp
from dpteach import panels

PACKAGE = pathlib.Path(dp.__file__).resolve().parent
MAX_LINES = 600


def _public_files():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if any(p.startswith("_") and p != "__init__.py" for p in parts):
            continue
        yield path


def _public_names():
    """name -> modules, for every public name of dpteach outside the panels."""
    names = {n: ["dpteach"] for n in dp.__all__}
    for info in pkgutil.walk_packages(dp.__path__, "dpteach."):
        parts = info.name.split(".")[1:]
        if parts[0] == "panels" or any(p.startswith("_") for p in parts):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            names.setdefault(name, []).append(info.name)
    return names


def test_no_public_module_is_over_600_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in _public_files()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"public modules over {MAX_LINES} lines (split them): {long}"


MAX_FUNCTION_LINES = 100
#: functions still over MAX_FUNCTION_LINES (issue 21, item 5), "module path::function";
#: shrink this list, never grow it: any other long function fails the test below
LONG_FUNCTIONS_LEFT: set = set()


def _long_functions(path):
    """(name, lines) of every def in a file longer than MAX_FUNCTION_LINES; nested defs
    are measured on their own too (an outer def's count includes its nested ones)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def test_no_module_private_ones_included_is_over_600_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in sorted(PACKAGE.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them): {long}"


def test_no_function_is_over_100_lines():
    found = {f"{p.relative_to(PACKAGE).as_posix()}::{name}": n
             for p in sorted(PACKAGE.rglob("*.py")) for name, n in _long_functions(p)}
    new = {k: n for k, n in found.items() if k not in LONG_FUNCTIONS_LEFT}
    assert not new, f"functions over {MAX_FUNCTION_LINES} lines (split them): {new}"
    fixed = LONG_FUNCTIONS_LEFT - set(found)
    assert not fixed, f"no longer over {MAX_FUNCTION_LINES} lines, drop from the list: {fixed}"


def test_the_function_count_sees_a_long_function(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES)
    assert _long_functions(f) == [("f", MAX_FUNCTION_LINES + 1)]

def test_the_line_count_sees_a_long_module(tmp_path):
    # the check above counts lines the way an editor does
    f = tmp_path / "m.py"
    f.write_text("x = 1\n" * (MAX_LINES + 1))
    assert len(f.read_text().splitlines()) > MAX_LINES


@pytest.mark.parametrize("module", ["dpteach.panels._render", "dpteach.attacks._solvers",
                                    "dpteach.coursework._mechanism_judge",
                                    "dpteach.coursework._mechanism_stats",
                                    "dpteach.coursework._feedback"])
def test_machinery_modules_are_private(module):
    importlib.import_module(module)
    assert module.rsplit(".", 1)[1].startswith("_")
    assert module.rsplit(".", 1)[1] not in dp.__all__


# -- lessons on top, the coursework's machinery in its own wing ----------------------------
#: what checks, grades and hands out the coursework: in dpteach/coursework/, never on top
COURSEWORK_MODULES = {"grading", "exercises", "assignments", "student_copies", "nbgrader_export",
                      "_grade_kernel", "_grade_report", "_grade_runner", "_sandbox", "_feedback",
                      "_mechanism_judge", "_mechanism_stats", "_anonymity_checks"}
#: the former top-level names of the machinery (dpteach/coursework.py was the student copies)
FORMER_TOP_LEVEL = {"grading", "exercises", "assignments", "_nbgrader", "_grade_kernel",
                    "_grade_report", "_grade_runner", "_sandbox", "_feedback", "_mechanism_judge",
                    "_mechanism_stats", "_anonymity_checks"}


def test_coursework_machinery_lives_in_its_own_wing():
    top = {info.name for info in pkgutil.iter_modules(dp.__path__)}
    assert not top & FORMER_TOP_LEVEL, f"machinery on top: {sorted(top & FORMER_TOP_LEVEL)}"
    assert "coursework" in top and not (PACKAGE / "coursework.py").exists()
    wing = {info.name for info in pkgutil.iter_modules([str(PACKAGE / "coursework")])}
    assert COURSEWORK_MODULES <= wing, sorted(COURSEWORK_MODULES - wing)
    # what the notebooks call keeps its name: dp.exercises.check_*, dp.assignments.check
    assert dp.exercises.__name__ == "dpteach.coursework.exercises"
    assert dp.assignments.__name__ == "dpteach.coursework.assignments"
    assert callable(dp.exercises.check_number) and callable(dp.assignments.check)
    # and no alias module is left at an old path (a file or a package of that name)
    left = [old for old in FORMER_TOP_LEVEL
            if (PACKAGE / f"{old}.py").exists() or (PACKAGE / old).is_dir()]
    assert not left, f"alias modules at the old paths: {left}"


# -- the top level says "read these, skip those" -------------------------------------------
#: the packages beside the lessons: the slider panels, the coursework's machinery, the
#: attacks of notebooks 01-03 and 11, and what several lessons share (private)
SUPPORT_PACKAGES = {"panels", "coursework", "attacks", "_support"}
#: the course's helpers on top: navigation and shown source, drawing, palette, seed tables
COURSE_HELPERS = {"notebook", "plots", "style", "datasets"}
#: the lessons that are a package, one module per part, every name reached from the package
LESSON_PACKAGES = {"audit", "local"}
#: former top-level modules and where they live now (no alias is left at the old path)
MOVED_DOWN = {"_validate": "_support.validate", "_tables": "_support.tables",
              "_gaussian": "_support.gaussian", "_densities": "_support.densities",
              "_lazy": "_support.lazy", "_audit_outputs": "_support.audit_outputs",
              "audit_zoo": "audit.zoo", "local_protocols": "local.protocols",
              "cli": "coursework.cli"}


def _lesson_map():
    """The package docstring's list of what each notebook teaches (before the support)."""
    import dpteach

    return dpteach.__doc__.split("Support the notebooks use")[0]


def test_the_top_level_holds_lessons_support_packages_and_course_helpers():
    top = {info.name: info.ispkg for info in pkgutil.iter_modules(dp.__path__)}
    packages = {name for name, is_package in top.items() if is_package}
    assert packages == SUPPORT_PACKAGES | LESSON_PACKAGES, sorted(packages)
    private = sorted(name for name in top if name.startswith("_") and name != "__main__"
                     and name not in SUPPORT_PACKAGES)
    assert not private, f"private modules on top (they belong in dpteach/_support/): {private}"
    lessons = {name for name, is_package in top.items() if not is_package} - COURSE_HELPERS - \
        {"__main__"}
    lessons |= LESSON_PACKAGES
    unmapped = sorted(n for n in lessons if f"``{n}``" not in _lesson_map()
                      and f"``{n}/``" not in _lesson_map())
    assert not unmapped, f"modules on top that no notebook's entry of the map names: {unmapped}"
    for name in LESSON_PACKAGES:           # dp.<lesson>.NAME for every name of its parts
        package = importlib.import_module(f"dpteach.{name}")
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_"):
                continue
            part = importlib.import_module(f"dpteach.{name}.{info.name}")
            for public in part.__all__:
                assert public in package.__all__, f"dpteach.{name}.{info.name}.{public}"
                assert getattr(package, public) is getattr(part, public), public
    left = [old for old in MOVED_DOWN if (PACKAGE / f"{old}.py").exists() or (PACKAGE / old).is_dir()]
    assert not left, f"alias modules at the old paths: {left}"
    for old, new in MOVED_DOWN.items():
        importlib.import_module(f"dpteach.{new}")
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"dpteach.{old}")


def test_the_top_level_check_sees_a_stray_module(tmp_path):
    """The wrong twin: a private module or an unmapped one on top is seen."""
    (tmp_path / "_helpers.py").write_text("", encoding="utf-8")
    (tmp_path / "scratch.py").write_text("", encoding="utf-8")
    top = {info.name for info in pkgutil.iter_modules([str(tmp_path)])}
    assert {n for n in top if n.startswith("_")} == {"_helpers"}
    assert "``scratch``" not in _lesson_map() and "``scratch/``" not in _lesson_map()


#: imports of another module's private names still left, "module path::name" (DESIGN: a
#: private name is used only in its own module); shrink this list, never grow it
PRIVATE_IMPORTS_LEFT: set = set()


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses(path, modules):
    """The private names ``path`` takes from another dpteach module: ``from m import _x``
    (a private module itself may be imported: ``from . import _sandbox``) and ``m._x`` on
    a name bound to a dpteach module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    bound, found = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if not node.level and not (node.module or "").startswith("dpteach"):
                continue
            base = package[:len(package) - (node.level - 1)] if node.level else []
            target = ".".join(base + (node.module.split(".") if node.module else []))
            for alias in node.names:
                bound.add(alias.asname or alias.name)
                if _private(alias.name) and f"{target}.{alias.name}" not in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.Import):
            bound.update(a.asname or a.name.split(".")[0] for a in node.names
                         if a.name.startswith("dpteach"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and \
                isinstance(node.value, ast.Name) and node.value.id in bound:
            found.add(node.attr)
    return found


def test_no_module_uses_another_modules_private_names():
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    found = {f"{p.relative_to(PACKAGE).as_posix()}::{n}" for p in sorted(PACKAGE.rglob("*.py"))
             for n in _private_uses(p, modules)}
    new = found - PRIVATE_IMPORTS_LEFT
    assert not new, ("private names used outside their module (make them public names of a "
                     f"private module, or move them to their one user): {sorted(new)}")
    fixed = PRIVATE_IMPORTS_LEFT - found
    assert not fixed, f"no longer used outside their module, drop from the list: {sorted(fixed)}"
    assert not any(k.startswith("coursework/") and not k.startswith("coursework/_anonymity_checks")
                   for k in found), "the coursework's machinery shares no private names"


def test_the_private_name_check_sees_one(tmp_path):
    (tmp_path / "dpteach").mkdir()
    f = tmp_path / "dpteach" / "m.py"
    f.write_text("from ._feedback import _g, Feedback\nfrom . import _sandbox\n"
                 "from . import grading\nx = grading._Kernel\n")
    modules = {"dpteach._sandbox", "dpteach._feedback", "dpteach.grading"}
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "dpteach"
    try:
        assert _private_uses(f, modules) == {"_g", "_Kernel"}
    finally:
        PACKAGE = saved


def test_panel_contract_holds_no_rendering_machinery():
    source = (PACKAGE / "panels" / "_panel.py").read_text(encoding="utf-8")
    for word in ("copy_from_bbox", "restore_region", "zlib", "struct.pack", "IHDR", "stale",
                 "get_xlim", "draw_artist"):
        assert word not in source, f"{word} belongs in panels/_render.py"
    assert "class Panel" in source
    assert "def register" in (PACKAGE / "panels" / "_registry.py").read_text(encoding="utf-8")
    render = (PACKAGE / "panels" / "_render.py").read_text(encoding="utf-8")
    assert "copy_from_bbox" in render and "IHDR" in render


def test_panel_names_do_not_clash_with_core_names():
    public = _public_names()
    clashes = {name: public[name] for name in panels.REGISTRY if name in public}
    assert not clashes, f"panel builders named like core functions: {clashes}"
    # and the former clashing names are gone from the panels
    for old in ("gaussian_sigma", "laplace_accuracy"):
        assert old not in list(panels.REGISTRY)
        with pytest.raises(KeyError):
            panels.REGISTRY[old]
        with pytest.raises(AttributeError):
            getattr(panels, old)


def test_the_clash_check_would_see_a_clash():
    public = _public_names()
    assert "gaussian_sigma" in public and "laplace_accuracy" in public


def test_every_panel_is_listed_once():
    with pytest.raises(KeyError):
        panels.REGISTRY["no_such_panel"]
    # listed once: the generic harness of tests/panels/test_panels.py iterates REGISTRY
    builders = list(panels.REGISTRY.values())
    assert len(builders) == len(set(builders))


def _registered_in_source(path):
    """The top-level functions of a panel module under a bare ``@register`` (ast)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and any(isinstance(d, ast.Name) and d.id == "register" for d in node.decorator_list)}


def test_every_panel_builder_is_found_where_it_is_defined():
    """dpteach/panels reads its modules' source to learn which module defines each
    builder (so that a panel loads only its own module); what it reads must be what the
    modules register once imported, and what ast finds in them, with no builder left
    out and none registered any other way (a name written once: ``@register`` bare)."""
    found = dict(panels.REGISTRY.found)
    by_ast = {}
    for info in pkgutil.iter_modules(panels.__path__):
        if info.name.startswith("_"):
            continue
        importlib.import_module(f"dpteach.panels.{info.name}")
        for name in _registered_in_source(PACKAGE / "panels" / f"{info.name}.py"):
            by_ast[name] = f"dpteach.panels.{info.name}"
    registered = {name: builder.__module__ for name, builder in panels.REGISTRY.items()}
    assert found == by_ast == registered
    assert len(found) >= 40 and set(panels.__all__) >= set(found)
    for name, module in found.items():
        source = inspect.getsource(importlib.import_module(module))
        assert f'register("{name}")' not in source and f'name="{name}"' not in source, name


def test_the_source_reader_sees_only_bare_top_level_registrations(tmp_path):
    """The wrong twins of the convention: a builder under a register call with a name,
    one nested in another function and an example in a docstring (indented) are not
    found; a private module is not read. (A docstring line ``@register`` at the left
    margin would be: the test above holds what is found to what the modules register.)"""
    (tmp_path / "topic.py").write_text(
        '"""How to add one:\n\n    @register\n    def in_prose(): ..."""\n'
        "@register\ndef first(): ...\n\n\n"
        "@register\n@functools.cache\ndef second(): ...\n\n\n"
        "@register('third')\ndef third(): ...\n\n\n"
        "def outer():\n    @register\n    def nested(): ...\n", encoding="utf-8")
    (tmp_path / "_machinery.py").write_text("@register\ndef hidden(): ...\n", encoding="utf-8")
    from dpteach.panels._registry import _LazyBuilder, _Registry
    registry = _Registry()
    registry.find("fake_panels", [str(tmp_path)])
    assert registry.found == {"first": "fake_panels.topic", "second": "fake_panels.topic"}
    assert all(isinstance(dict.get(registry, n), _LazyBuilder) for n in registry.found)
    assert registry.modules() == {"topic"}
    assert _registered_in_source(tmp_path / "topic.py") == {"first", "second"}


def test_register_names_the_panel_after_its_function_and_refuses_a_name():
    from dpteach.panels import Panel, register
    from dpteach.panels._controls import int_slider
    from dpteach.plots import new_figure

    def made_up_panel(k=3):
        """A panel for this test only."""
        fig, ax = new_figure()
        (line,) = ax.plot([0, 1], [0, 0])
        return Panel({"k": int_slider("k", k, 1, 5)}, fig,
                     lambda k: line.set_ydata([0, k]))
    try:
        builder = register(made_up_panel)
        assert panels.REGISTRY["made_up_panel"] is builder
        panel = builder()
        assert panel.name == "made_up_panel"
        with pytest.raises(ValueError, match="k must be"):
            builder(k=9)
        panel.close()
    finally:
        dict.pop(panels.REGISTRY, "made_up_panel", None)
    with pytest.raises(TypeError, match="bare"):
        register("made_up_panel")
    assert "made_up_panel" not in panels.REGISTRY


def test_panels_modules_compute_nothing_they_could_import():
    """The computations the panels used to hold live in the core modules now."""
    from dpteach.panels import audit as p_audit, gaussian as p_gaussian
    from dpteach.panels import properties as p_properties
    assert p_gaussian.sigma_curves.__module__ == "dpteach.mechanisms"
    assert p_gaussian.queries_noise.__module__ == "dpteach.comparison"
    assert p_properties.parallel_costs.__module__ == "dpteach.properties"
    assert p_properties.group_curves.__module__ == "dpteach.properties"
    assert "def audit_convergence_counts" not in inspect.getsource(p_audit)


def test_curator_releases_through_the_laplace_mechanism():
    source = inspect.getsource(dp.curator)
    assert "laplace_mechanism(" in source
    for inline in (".laplace(", ".normal("):
        assert inline not in source, f"the Curator samples inline: {inline}"


def test_laplace_std_is_the_one_home_of_sqrt2_b():
    for b in (0.1, 1.0, 7.5):
        assert dp.bounds.laplace_std(b) == pytest.approx(stats.laplace(scale=b).std(), rel=1e-12)
        assert dp.bounds.laplace_std(b) != pytest.approx(b, rel=1e-3)           # the wrong twin: sd = b
    assert dp.bounds.laplace_std(0.0) == 0.0
    assert dp.bounds.laplace_std(float("inf")) == float("inf")
    for bad in (-1.0, float("nan"), "1", True):
        with pytest.raises((TypeError, ValueError), match="scale"):
            dp.bounds.laplace_std(bad)
    assert dp.attacks.averaging.averaging_error(2.0, 4) == pytest.approx(dp.bounds.laplace_std(2.0) / 2)


# -- one home per name: no import circles, no module __getattr__ ---------------------------
#: modules allowed a module-level __getattr__: the package's lazy ``dp.NAME`` loader and the
#: panels' lazy loader of REGISTRY builders (both load a module on first use; neither
#: serves a former name)
LAZY_LOADERS = {"dpteach", "dpteach.panels"}


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path, modules):
    """The dpteach modules that the module at ``path`` imports: every ``import dpteach.x``,
    ``from dpteach.x import y``, ``from . import x`` and ``from .x import y``, at module
    level and inside functions and classes alike (an import inside a function still ties
    the two modules into one: the circle is only hidden until the call)."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = ".".join(base + (node.module.split(".") if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:               # ``from . import x`` imports module x
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
    return (found & set(modules)) - {name}


def _import_graph():
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: _imported_modules(path, paths) for name, path in paths.items()}


def _circles(graph):
    """The import circles among the non-``__init__`` modules: the strongly connected
    components of more than one module, and modules that import themselves."""
    nodes = [m for m in graph if not (PACKAGE.parent / (m.replace(".", "/") + "/__init__.py")).exists()]
    edges = {m: [t for t in graph[m] if t in nodes] for m in nodes}
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    graph = _import_graph()
    assert "dpteach.audit.experiment" in graph["dpteach.audit.zoo"]   # the graph sees imports
    # ... inside functions too
    assert "dpteach.coursework._grade_kernel" in graph["dpteach.coursework._grade_runner"]
    assert not _circles(graph), f"import circles: {_circles(graph)}"


def test_the_circle_check_would_see_a_circle():
    graph = {"dpteach.a": {"dpteach.b"}, "dpteach.b": {"dpteach.c"}, "dpteach.c": {"dpteach.a"},
             "dpteach.d": {"dpteach.a"}}
    assert _circles(graph) == [["dpteach.a", "dpteach.b", "dpteach.c"]]
    source = "def f():\n    from . import b\n"
    tree = ast.parse(source)
    assert any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))


def test_no_module_getattr_but_the_lazy_loaders():
    hooks = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name in ("__getattr__", "__dir__")
               for n in tree.body):
            hooks.append(_module_name(path))
    assert set(hooks) <= LAZY_LOADERS, f"module __getattr__/__dir__ hooks: {sorted(set(hooks) - LAZY_LOADERS)}"


def test_the_package_docstring_names_every_module_a_newcomer_meets():
    """The package docstring is the map: every lesson and support module at the top
    level, every subpackage and every coursework module is named in it."""
    import dpteach

    doc = dpteach.__doc__
    names = [p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")]
    names += [p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()]
    names += [p.stem for p in (PACKAGE / "coursework").glob("[a-z]*.py")]
    missing = [n for n in sorted(set(names)) if f"``{n}" not in doc]
    assert not missing, f"modules the package docstring does not name: {missing}"


def test_test_files_have_unique_basenames_and_heavy_first_names_them():
    """The test folders hold no two files of one basename (pytest imports each under its
    basename), and every file HEAVY_FIRST (tests/conftest.py) starts early exists."""
    from collections import Counter

    from conftest import HEAVY_FIRST

    files = [p.name for p in (PACKAGE.parent / "tests").rglob("*.py")]
    assert [name for name, n in Counter(files).items() if n > 1] == []
    assert sorted(set(HEAVY_FIRST) - set(files)) == []
