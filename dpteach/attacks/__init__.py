"""Attacks on released statistics: differencing, query auditing, averaging,
Dinur-Nissim reconstruction, and Mironov's floating-point attack.

Names load on first use (see ``_EXPORTS``), like the top-level package.
"""

from __future__ import annotations

import importlib

# public name -> submodule of dpteach.attacks that defines it
_EXPORTS = {
    "naive_laplace_mechanism": "floating_point",
    "floating_point_attack": "floating_point",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpteach.attacks' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
