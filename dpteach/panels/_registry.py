"""The panel registry: every builder listed once, named once, imported on first use.

A panel module defines a builder as a top-level function under a bare ``@register``,
and the panel takes the function's name; nothing else lists the panels. When
``dpteach.panels`` is imported it calls :meth:`REGISTRY.find <_Registry.find>`, which
reads the source of each panel module (each module of the package whose name has no
leading underscore) and notes the functions written under ``@register``, importing
nothing; the registry holds a stand-in for each. Looking a builder up (``REGISTRY[name]``,
``.get``, ``.values()``, ``.items()``, ``dp.panels.NAME``) imports that builder's module
only, whose ``@register`` puts the real builder in place. Reading the sources costs a few
milliseconds; ``tests/system/test_layout.py`` holds what it finds to what the modules register.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from typing import Callable

from .. import style as _style
from ._controls import BadInitialValue, name_parameter
from ._panel import Panel

__all__ = ["REGISTRY", "register"]

#: a builder's definition in a panel module's source: ``@register`` alone on its line at
#: the left margin, perhaps more decorators, then ``def NAME(`` at the margin too
_DEFINITION = re.compile(r"^@register[ \t]*(?:#[^\n]*)?\n(?:@[^\n]*\n)*def[ \t]+(\w+)", re.M)


class _Registry(dict):
    """name -> builder, every panel listed once; an entry whose module is not imported
    yet is a stand-in until it is looked up."""

    def __init__(self):
        super().__init__()
        #: name -> module, as read from the panel modules' source by :meth:`find`
        self.found: dict[str, str] = {}

    def find(self, package: str, path) -> None:
        """Read every panel module of ``package`` (its folders: ``path``) and put a
        stand-in in the registry for each builder defined there under ``@register``.
        A module whose source cannot be read (an install without sources) is imported
        instead: its builders register themselves."""
        for info in pkgutil.iter_modules(path):
            if info.name.startswith("_"):
                continue
            module = f"{package}.{info.name}"
            spec = info.module_finder.find_spec(module)
            source = spec.loader.get_source(module) if spec is not None else None
            if source is None:
                importlib.import_module(module)
                self.found.update((n, module) for n, b in dict.items(self)
                                  if getattr(b, "__module__", None) == module)
                continue
            for name in _DEFINITION.findall(source):
                self.found[name] = module
                if not dict.__contains__(self, name):
                    dict.__setitem__(self, name, _LazyBuilder(name, module))

    def modules(self) -> set[str]:
        """The names of the panel modules that define a builder (``"laplace"``, ...)."""
        return {module.rsplit(".", 1)[1] for module in self.found.values()}

    def __getitem__(self, name):
        value = dict.__getitem__(self, name)
        if isinstance(value, _LazyBuilder):
            importlib.import_module(value.module)
            value = dict.__getitem__(self, name)
            if isinstance(value, _LazyBuilder):
                raise KeyError(f"{value.module} does not register the panel {name!r}")
        return value

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def values(self):
        return [self[name] for name in self]

    def items(self):
        return [(name, self[name]) for name in self]


class _LazyBuilder:
    """Stands in for a panel builder whose module is not imported yet; calling it
    imports the module and builds the panel."""

    def __init__(self, name, module):
        self.panel_name = self.__name__ = self.__qualname__ = name
        self.module = self.__module__ = module
        self.__doc__ = f"Build the {name!r} panel (defined in {module}, imported on first use)."

    def __call__(self, *args, **kwargs):
        return REGISTRY[self.panel_name](*args, **kwargs)

    def __repr__(self):
        return f"<panel builder {self.panel_name!r}: {self.module} not imported yet>"


#: name -> builder, filled by the @register decorator of every panel module.
REGISTRY: dict[str, Callable[..., Panel]] = _Registry()


def register(builder):
    """Add a panel builder to :data:`REGISTRY` under the function's own name.

    Written bare, on the line above a top-level ``def`` of a panel module (that is how
    the registry finds the builder before its module is imported). The builder is
    wrapped so that it checks its arguments like any public function: the control
    factories refuse an initial value outside the control's range (or of the wrong
    kind: NaN, a string, a bool for a number) before any widget exists, and the wrapper
    reports it as a ValueError or TypeError naming the builder's parameter. The panel
    the builder returns is given the builder's name and, in lecture mode, restyled.
    """
    if isinstance(builder, str) or not callable(builder):
        raise TypeError("register is written bare above the builder (@register, then "
                        f"def NAME(...)): the panel takes the function's name; got {builder!r}")
    name = builder.__name__
    current = dict.get(REGISTRY, name)
    if (current is not None and not isinstance(current, _LazyBuilder)
            and getattr(current, "__wrapped__", None) is not builder):
        raise ValueError(f"panel {name!r} registered twice")

    @functools.wraps(builder)
    def build(*args, **kwargs):
        try:
            with _style.drawing_in_normal_style() as chosen:
                panel = builder(*args, **kwargs)
        except BadInitialValue as exc:
            raise name_parameter(builder, args, kwargs, exc) from None
        if isinstance(panel, Panel):
            panel.name = name
            if chosen["lecture"]:
                panel.restyle()           # built in lecture mode: scaled like a live panel
        return panel

    build.panel_name = name
    dict.__setitem__(REGISTRY, name, build)
    return build
