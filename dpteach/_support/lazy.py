"""Imports paid for only when needed (private; no notebook reads this).

``special = lazy_module("scipy.special")`` at the top of a kit module reads like
``from scipy import special`` and is used the same way (``special.expit(x)``), but the
import happens at the first attribute read, inside the function that needs it. A fresh
kernel then pays for scipy.special (a third of a second) only when a computation uses
it, not because the module that holds that computation was imported
(benchmarks/bench_first_panel.py); the functions a notebook shows with
``dp.notebook.show_source`` keep their source as it was.

A process of its own (the ``dpteach`` command, the grading runner) also goes without
modules that a dependency imports for nothing the kit uses
(:func:`go_without_unneeded_modules`).
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["go_without_unneeded_modules", "lazy_module"]

#: jsonschema (which nbformat, and so nbclient, imports to validate notebooks) loads
#: rfc3987_syntax when it is installed (JupyterLab's stack brings it), only to check the
#: "iri" string format, which no notebook schema uses; that import compiles a grammar,
#: about 1.5 s of every `dpteach` command and of every graded notebook.
UNNEEDED = ("rfc3987_syntax",)


def go_without_unneeded_modules() -> None:
    """Make the :data:`UNNEEDED` modules unimportable in this process (``import`` raises
    ImportError, as if they were absent). Only for a process of its own (the ``dpteach``
    command, the grading runner): a host calling the kit from Python keeps its modules."""
    for name in UNNEEDED:
        sys.modules.setdefault(name, None)


class _LazyModule:
    __slots__ = ("_name", "_module")

    def __init__(self, name):
        self._name = name
        self._module = None

    def __getattr__(self, attr):
        module = self._module
        if module is None:      # the first read imports; later reads only look up
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __dir__(self):
        return dir(importlib.import_module(self._name))

    def __repr__(self):
        return f"<module {self._name!r}, imported on first use>"


def lazy_module(name: str):
    """A stand-in for the module ``name`` that imports it on first attribute access."""
    return _LazyModule(name)
