"""Slider panels, one module per notebook topic.

Every builder is registered in :data:`REGISTRY` (name -> builder) by the modules of
this package, which are all imported here; each builder is also an attribute of this
package, so a notebook writes ``dp.panels.laplace_privacy_loss()``.
"""

import importlib
import pkgutil

from ._base import REGISTRY, Panel, register

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

globals().update(REGISTRY)
__all__ = ["REGISTRY", "Panel", "register", *sorted(REGISTRY)]
