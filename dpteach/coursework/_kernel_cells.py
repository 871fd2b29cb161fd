"""The code cells the grader runs in a kernel before a student's notebook.

The notebook's own ``dp.assignments.check(...)`` calls are turned off (the grader runs
every task itself), and, when grading without the sandbox, every forbidden kit function is
made to raise (in the sandbox the kit the kernel imports has none of them).
"""

from __future__ import annotations

from ._kernel_kit import REMOVED as FORBIDDEN_MESSAGE


STUB_CELL = '''\
def _grader_stubs(targets):
    import importlib, sys, types
    def make(label, real):
        space = {{"__name__": real.__module__}}
        exec("def stub(*args, **kwargs):\\n    raise RuntimeError(%r)\\n"
             % {message!r}.format(label=label), space)
        stub = space["stub"]
        stub.__name__, stub.__qualname__ = real.__name__, real.__qualname__
        return stub
    for target in targets:
        mod_name, name = target.split(":")
        try:
            real = getattr(importlib.import_module(mod_name), name)
        except (ImportError, AttributeError):
            continue
        real = getattr(real, "_forbidden_real", real)
        if not isinstance(real, types.FunctionType) or getattr(real, "_grader_stub", False):
            continue
        label = (real.__module__ or mod_name).replace("dpteach", "dp") + "." + name
        stub = make(label, real)
        # a decorated function (functools.wraps): the functions it wraps raise too, so
        # neither __wrapped__ nor a wrapper kept in a registry or a default runs the body
        inner, seen = real, set()
        while isinstance(getattr(inner, "__wrapped__", None), types.FunctionType) and \
                id(inner) not in seen:
            seen.add(id(inner))
            inner = inner.__wrapped__
            if not inner.__code__.co_freevars:
                inner.__code__ = make(label, inner).__code__
                inner.__defaults__ = inner.__kwdefaults__ = None
                inner._grader_stub = True
        if not real.__code__.co_freevars:
            # the function object stays where it is, however it was (or will be) captured
            real.__code__ = stub.__code__
            real.__defaults__ = real.__kwdefaults__ = None
            real._grader_stub = True
            continue
        stub._grader_stub = True
        for mod in list(sys.modules.values()):
            space = getattr(mod, "__dict__", None)
            if getattr(mod, "__name__", "").startswith("dpteach") and isinstance(space, dict):
                for key, value in list(space.items()):
                    if value is real:
                        space[key] = stub
_grader_stubs({targets!r})
del _grader_stubs
'''


#: run first in a grading kernel: the notebook's own ``dp.assignments.check(...)`` calls
#: return at once, since the grader runs every task itself on hidden inputs and reads no
#: output of the notebook (in the sandbox the judges are not there to run anyway)
CHECKS_OFF_CELL = '''\
def _grader_checks_off():
    from dpteach.coursework import assignments
    from dpteach.coursework._feedback import Feedback

    def check(assignment, key, *args, **kwargs):
        return Feedback(True, f"{key}: not run while grading; the grader runs this task "
                              "itself, on hidden inputs", details={"reason": "grading"})
    check.__doc__ = assignments.check.__doc__
    assignments.check = check
_grader_checks_off()
del _grader_checks_off
'''


def prelude_cell(targets, sandboxed=True) -> str:
    """Code a grading kernel runs before the notebook: the notebook's checks turned off;
    without the sandbox, every forbidden function made to raise as well (in the sandbox
    the kit it imports has none of them)."""
    if sandboxed or not targets:
        return CHECKS_OFF_CELL
    return CHECKS_OFF_CELL + stub_cell(targets)


def stub_cell(targets) -> str:
    """Code for the kernel, run before the notebook: every forbidden function raises."""
    return STUB_CELL.format(message=FORBIDDEN_MESSAGE, targets=tuple(sorted(set(targets))))
