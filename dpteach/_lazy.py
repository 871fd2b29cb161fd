"""A module imported when it is first used (private; no notebook reads this).

``special = lazy_module("scipy.special")`` at the top of a kit module reads like
``from scipy import special`` and is used the same way (``special.expit(x)``), but the
import happens at the first attribute read, inside the function that needs it. A fresh
kernel then pays for scipy.special (a third of a second) only when a computation uses
it, not because the module that holds that computation was imported
(benchmarks/bench_first_panel.py); the functions a notebook shows with
``dp.notebook.show_source`` keep their source as it was.
"""

from __future__ import annotations

import importlib

__all__ = ["lazy_module"]


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
