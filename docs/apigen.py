"""Write the API reference pages (reStructuredText) from the dpteach package itself.

Nothing here lists modules or names by hand: the pages follow the package. Every public
module (no leading underscore) gets a page; on it, first the names a notebook reaches as
``dp.NAME`` (documented as ``dpteach.NAME``, the way the course spells them), then the
module's other public functions and classes. Subpackages (attacks, panels, ...) get a
section each on the index page. Used by ``docs/conf.py`` at build time.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import pkgutil
import re

PACKAGE = "dpteach"
SKIP = {"__main__"}  # running it is the command line, not something to document


def public_modules(package: str = PACKAGE, skipped: dict[str, str] | None = None) -> list[str]:
    """Every importable public module under ``package``, in a stable order; a module that
    cannot be imported (a missing optional dependency) goes into ``skipped`` with the
    reason instead of stopping the build."""
    skipped = {} if skipped is None else skipped
    root = importlib.import_module(package)
    names = []

    def failed(name):
        skipped[name] = "could not be imported"

    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}.", onerror=failed):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts[1:]) or parts[-1] in SKIP:
            continue
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # noqa: BLE001 -- reported, and the page is left out
            skipped[info.name] = f"{type(exc).__name__}: {exc}"
            continue
        names.append(info.name)
    return sorted(names)


def _defining_module(name: str, obj, modules: list[str]) -> str | None:
    """The module that defines ``obj``: its ``__module__``, or for plain data (a dict, a
    number) the public module whose source assigns the name at top level."""
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and module != PACKAGE:
        return module
    pattern = re.compile(rf"^{re.escape(name)}\s*[:=]", re.MULTILINE)
    for modname in modules:
        mod = importlib.import_module(modname)
        if vars(mod).get(name) is obj:
            try:
                if pattern.search(inspect.getsource(mod)):
                    return modname
            except (OSError, TypeError):
                continue
    return None


def top_level_exports(modules: list[str], package: str = PACKAGE) -> dict[str, str]:
    """``dp.NAME`` -> the module that defines it, for every name in ``dpteach.__all__``."""
    root = importlib.import_module(package)
    exports = {}
    for name in getattr(root, "__all__", []):
        if name.startswith("_"):
            continue
        obj = getattr(root, name)  # the package loads lazily: this imports the real object
        if inspect.ismodule(obj):
            continue
        module = _defining_module(name, obj, modules)
        if module is not None:
            exports[name] = module
    return exports


def _directive(obj) -> str | None:
    if inspect.isclass(obj):
        return "autoclass"
    if callable(obj):
        return "autofunction"
    return None


def _source_line(obj) -> int:
    try:
        return inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return 10**9


def _own_members(module) -> list[str]:
    """Public functions and classes defined in ``module`` itself, in source order."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    own = []
    for name in names:
        obj = getattr(module, name, None)
        if obj is None or _directive(obj) is None:
            continue
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        own.append(name)
    return sorted(own, key=lambda n: _source_line(getattr(module, n)))


def _title(text: str, char: str) -> str:
    return f"{text}\n{char * len(text)}\n"


def _entry(directive: str, name: str) -> str:
    options = "   :members:\n   :show-inheritance:\n" if directive == "autoclass" else ""
    return f".. {directive}:: {name}\n{options}\n"


def _data(modname: str, name: str) -> str:
    """A constant reachable as ``dp.NAME``, described by the ``#:`` comment above it in its
    own module (autodoc would look for one in the package's ``__init__``, find none and
    show the docstring of the value's type instead: numpy's, for an array)."""
    from sphinx.pycode import ModuleAnalyzer

    comment = ModuleAnalyzer.for_module(modname).find_attr_docs().get(("", name), [])
    body = "".join(f"   {line}\n" for line in comment if line.strip()) or "   (a constant)\n"
    return f".. py:data:: {name}\n\n{body}\n"


def module_page(modname: str, exports: dict[str, str]) -> str:
    module = importlib.import_module(modname)
    root = importlib.import_module(PACKAGE)
    lazy = sorted((n for n, m in exports.items() if m == modname),
                  key=lambda n: _source_line(getattr(root, n)))
    lines = [_title(f"``{modname}``", "="), f".. automodule:: {modname}\n\n"]
    if lazy:
        lines.append(_title("Reachable as ``dp.NAME``", "-"))
        lines.append(f".. currentmodule:: {PACKAGE}\n\n")
        for name in lazy:
            directive = _directive(getattr(root, name))
            lines.append(_entry(directive, name) if directive else _data(modname, name))
    rest = [n for n in _own_members(module) if n not in lazy]
    data = [n for n in _own_data(module) if n not in lazy]
    if rest or data:
        lines.append(_title("Also in this module" if lazy else "Functions and classes", "-"))
        lines.append(f".. currentmodule:: {modname}\n\n")
        for name in rest:
            lines.append(_entry(_directive(getattr(module, name)), name))
        for name in data:
            lines.append(_data(modname, name))
    return "".join(lines)


def _own_data(module) -> list[str]:
    """The constants of a module's ``__all__`` that its own source assigns (``EXAMPLE``,
    ``PROTOCOLS``), reached as ``dp.<module>.NAME``."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return []
    out = []
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj) or _directive(obj) is not None:
            continue
        if re.search(rf"^{re.escape(name)}\s*[:=]", source, re.MULTILINE):
            out.append(name)
    return out


def _summary_line(modname: str) -> str:
    """The first sentence of a module's docstring, on one line."""
    doc = inspect.getdoc(importlib.import_module(modname)) or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    match = re.match(r"(.+?\.)(\s|$)", paragraph)
    return match.group(1) if match else paragraph


def _group(modname: str) -> str:
    """"" for a top-level module, else the subpackage it belongs to."""
    parts = modname.split(".")
    if len(parts) > 2:
        return parts[1]
    return parts[1] if hasattr(importlib.import_module(modname), "__path__") else ""


def index_page(modules: list[str], exports: dict[str, str]) -> str:
    groups: dict[str, list[str]] = {}
    for modname in modules:
        groups.setdefault(_group(modname), []).append(modname)
    out = [_title("API reference", "="), "\n"]
    out.append(
        "Generated from the docstrings of the ``dpteach`` package. A notebook writes\n"
        "``import dpteach as dp``; every name in the first table is reachable as ``dp.NAME``.\n\n")
    out.append(_title("The public API: ``dp.NAME``", "-"))
    out.append(f".. currentmodule:: {PACKAGE}\n\n.. autosummary::\n\n")
    for name in sorted(exports, key=str.lower):
        out.append(f"   {name}\n")
    out.append("\n")
    for key in sorted(groups, key=lambda k: (k != "", k)):
        heading = "Lessons and helpers" if key == "" else f"``{PACKAGE}.{key}``"
        out.append(_title(heading, "-"))
        for modname in groups[key]:
            summary = _summary_line(modname)
            out.append(f"- :doc:`{modname}`" + (f" -- {summary}\n" if summary else "\n"))
        out.append("\n")
    out.append(".. toctree::\n   :hidden:\n   :maxdepth: 1\n\n")
    for key in sorted(groups, key=lambda k: (k != "", k)):
        for modname in groups[key]:
            out.append(f"   {modname}\n")
    return "".join(out)


def _write_if_changed(path: pathlib.Path, text: str) -> None:
    # rewriting an unchanged page would make Sphinx read it again on every build
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_reference(outdir: pathlib.Path, skipped: dict[str, str] | None = None) -> list[str]:
    """Write ``index.rst`` and one page per public module into ``outdir``; modules that
    cannot be imported are left out and named in ``skipped``."""
    outdir.mkdir(parents=True, exist_ok=True)
    modules = public_modules(skipped=skipped)
    exports = top_level_exports(modules)
    wanted = {"index.rst"}
    _write_if_changed(outdir / "index.rst", index_page(modules, exports))
    for modname in modules:
        _write_if_changed(outdir / f"{modname}.rst", module_page(modname, exports))
        wanted.add(f"{modname}.rst")
    for stale in outdir.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    return modules
