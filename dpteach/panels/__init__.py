"""Slider panels, one module per notebook topic.

Every builder is listed in :data:`REGISTRY` (name -> builder) and is an attribute of
this package, so a notebook writes ``dp.panels.laplace_privacy_loss()``. A panel module
defines each builder under a bare ``@register`` and nothing else lists it: on import,
this package reads its panel modules' source to learn which module defines which
builder (``_registry.py``). A panel's module (and what it imports: scipy, pandas, ...)
is loaded only when that panel is first looked up, so the first panel of a notebook
does not wait for the other twenty modules. CONTRIBUTING.md has the recipe for a panel.
"""

import importlib

from ._panel import Panel
from ._registry import REGISTRY, register

REGISTRY.find(__name__, __path__)


def __getattr__(name):
    """``dp.panels.NAME``: a builder (its module loads now) or a panel module."""
    if not name.startswith("_"):
        if name in REGISTRY.modules():
            return importlib.import_module(f"{__name__}.{name}")
        try:
            return REGISTRY[name]
        except KeyError:
            pass
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(REGISTRY) | REGISTRY.modules())


__all__ = ["REGISTRY", "Panel", "register", *sorted(REGISTRY)]
