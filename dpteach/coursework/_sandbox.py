"""The sandbox one submission runs in while it is graded (bubblewrap), and the stubs that
stand in for the kit functions a task forbids.

:func:`command` builds the ``bwrap`` command line: the whole file system read-only
(``--ro-bind / /``), a fresh ``/tmp`` and ``/dev``, one writable scratch folder, no
network (``--unshare-net``), its own PID namespace (``--unshare-pid``: when the sandbox's
first process ends, every process in it ends too; ``--die-with-parent``), an
unprivileged user (``--unshare-user --uid 65534 --gid 65534``, no capabilities) and an
environment of a few chosen variables (``--clearenv``). The kit's modules that hold a
forbidden function are mounted over with a copy whose function body only raises
(:func:`stub_sources`), and their ``__pycache__`` folders are hidden, so neither an
import, a reload, nor reading the compiled file finds the real code.

:func:`stub_cell` is the same in code run in the kernel before any cell of the
notebook: the real function objects have their code replaced (every reference to them,
however captured later, then raises). It is the only protection without the sandbox.

:func:`launch` runs the grading runner on a scratch folder, in the sandbox or (unsafe) as
a plain child process, and kills whatever it started when it ends or runs out of time.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

#: what a forbidden function raises while grading
FORBIDDEN_MESSAGE = ("{label} is not available while this assignment is graded: "
                     "the task is to compute it yourself")

#: the kit's package folder (dpteach/, this module's grandparent): it stays visible
_KIT = Path(__file__).resolve().parent.parent
#: environment variables passed into the sandbox (everything else is cleared)
_KEEP_ENV = ("PATH", "PYTHONPATH", "LANG", "LC_ALL", "VIRTUAL_ENV", "TZ")


@functools.lru_cache(maxsize=1)
def available() -> tuple:
    """(True, "") when bubblewrap runs here with every option the grader uses, else
    (False, why)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False, ("bubblewrap (bwrap) is not installed: apt-get install bubblewrap "
                       "(make grade installs it with CI=true), or see notebooks/README.md")
    with tempfile.TemporaryDirectory(prefix="grade_probe_") as scratch:
        cmd = command(scratch, ["/bin/sh", "-c", "echo ok > probe && id -u"], overlays={})
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as err:
            return False, f"bubblewrap did not run: {err}"
        if out.returncode != 0 or out.stdout.strip() != "65534" or \
                not (Path(scratch) / "probe").exists():
            why = (out.stderr or out.stdout).strip()[:300]
            return False, (f"bubblewrap cannot make a sandbox here ({why or out.returncode}); "
                           "unprivileged user namespaces may be disabled "
                           "(sysctl kernel.unprivileged_userns_clone=1)")
    return True, ""


def hideable(folders) -> list:
    """The ``folders`` (the batch's hand-ins, the report's folder) that can be hidden
    from the sandbox: not ``/``, ``/tmp``, nor one holding the kit or Python itself."""
    keep = [os.path.realpath(p) for p in (_KIT, sys.prefix,
                                           sys.executable, tempfile.gettempdir())]
    out = set()
    for folder in folders:
        folder = os.path.realpath(str(folder))
        if not os.path.isdir(folder) or folder == "/" or _under(folder, "/tmp"):
            continue                   # the sandbox's /tmp is a fresh one anyway
        if any(_under(k, folder) for k in keep):
            continue
        out.add(folder)
    # one empty folder over the outermost: a mount inside a read-only one cannot be made
    return sorted(f for f in out if not any(o != f and _under(f, o) for o in out))


def _kit_folders_in_tmp() -> list:
    """The kit's package folder and Python's prefixes when they lie under /tmp (a clone
    made there, as CI does): the sandbox's fresh /tmp would hide them otherwise."""
    folders = {os.path.realpath(p) for p in (_KIT, sys.prefix, sys.base_prefix,
                                              os.path.dirname(os.path.realpath(sys.executable)))}
    folders |= {os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    inside = {f for f in folders if _under(f, "/tmp") and f != "/tmp" and os.path.isdir(f)}
    return sorted(f for f in inside if not any(o != f and _under(f, o) for o in inside))


def _under(path, folder) -> bool:
    """``path`` is ``folder`` or inside it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def command(scratch, argv, *, overlays, masks=(), hidden=()) -> list:
    """The bwrap command running ``argv`` with ``scratch`` as the only writable folder;
    ``overlays`` maps a file's path to the file mounted over it (read-only); ``masks``
    are folders hidden behind an empty one, and so are ``hidden`` (other students'
    hand-ins, the report: see :func:`hideable`)."""
    scratch = str(Path(scratch).resolve())
    cmd = ["bwrap", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--dev", "/dev",
           "--proc", "/proc"]
    for folder in _kit_folders_in_tmp():   # a kit or venv under /tmp stays visible, read-only
        cmd += ["--ro-bind", folder, folder]
    for folder in hidden:
        cmd += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
    cmd += ["--bind", scratch, scratch,
           "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--unshare-user", "--uid", "65534", "--gid", "65534",
           "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    for name, value in _kept_env().items():
        cmd += ["--setenv", name, value]
    for name, value in _sandbox_env().items():
        cmd += ["--setenv", name, value]
    for target, source in overlays.items():
        cmd += ["--ro-bind", str(source), str(target)]
    for folder in masks:
        cmd += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
    return cmd + ["--chdir", scratch, "--", *map(str, argv)]


def _sandbox_env() -> dict:
    return {"HOME": "/tmp", "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/mpl",
            "JUPYTER_RUNTIME_DIR": "/tmp/jupyter", "JUPYTER_DATA_DIR": "/tmp/jupyter-data",
            "IPYTHONDIR": "/tmp/ipython", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1"}


def _kept_env() -> dict:
    """The variables of :data:`_KEEP_ENV` that are set, PYTHONPATH made absolute (the
    runner starts in the scratch folder, where "." would mean something else)."""
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) if p else os.getcwd()
                                            for p in env["PYTHONPATH"].split(os.pathsep))
    return env


def plain_env() -> dict:
    """The environment of the runner without the sandbox (the grader's own, with a
    private HOME and runtime folder under its scratch folder set by the caller)."""
    env = _kept_env()
    env.update({"MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"})
    return env


# ------------------------------------------------------------------ forbidden functions
def _resolve(target):
    """(label, real function) of ``"module:name"``, or None when it is not there."""
    mod_name, name = target.split(":")
    try:
        real = getattr(importlib.import_module(mod_name), name)
    except (ImportError, AttributeError):
        return None
    real = getattr(real, "_forbidden_real", real)
    if not inspect.isfunction(real):
        return None
    label = f"{(real.__module__ or mod_name).replace('dpteach', 'dp')}.{name}"
    return label, real


def _raising_body(label):
    text = FORBIDDEN_MESSAGE.format(label=label)
    return ast.parse(f"raise RuntimeError({text!r})").body


@functools.lru_cache(maxsize=None)
def _stub_sources_cached(targets: tuple, folder: str) -> tuple:
    by_file = {}                                     # file -> {function name: label}
    for target in targets:
        found = _resolve(target)
        if found is None:
            continue
        label, real = found
        real = inspect.unwrap(real)
        try:
            path = inspect.getsourcefile(real)
        except TypeError:
            continue
        if path is None or real.__qualname__ != real.__name__:
            continue                                 # not a module-level function
        by_file.setdefault(os.path.realpath(path), {})[real.__name__] = label
    overlays, masks = {}, set()
    tag = hashlib.sha256(repr(targets).encode()).hexdigest()[:12]
    for i, (path, names) in enumerate(sorted(by_file.items())):
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
                doc = ast.get_docstring(node)
                node.body = ([ast.Expr(ast.Constant(doc))] if doc else []) + \
                    _raising_body(names[node.name])
                node.decorator_list = []
        # named by the stubbed set too: one batch folder serves every assignment
        out = Path(folder) / f"{tag}_{i}_{Path(path).name}"
        out.write_text(ast.unparse(tree) + "\n", encoding="utf-8")
        overlays[path] = str(out)
        cache = Path(path).parent / "__pycache__"
        if cache.is_dir():
            masks.add(str(cache))
    return tuple(overlays.items()), tuple(sorted(masks))


def stub_sources(targets, folder) -> tuple:
    """(overlays, masks) for :func:`command`: a copy of each kit module defining one of
    the forbidden ``targets`` (``"module:name"``) with that function's body replaced by a
    ``raise``, written under ``folder`` (kept by the caller for the whole batch); and the
    ``__pycache__`` folders to hide."""
    overlays, masks = _stub_sources_cached(tuple(sorted(set(targets))), str(folder))
    return dict(overlays), list(masks)


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
#: output of the notebook (a check in a graded notebook only doubled the grading time)
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


def prelude_cell(targets) -> str:
    """Code a grading kernel runs before the notebook: the notebook's checks turned off,
    then every forbidden function made to raise."""
    return CHECKS_OFF_CELL + (stub_cell(targets) if targets else "")


def stub_cell(targets) -> str:
    """Code for the kernel, run before the notebook: every forbidden function raises."""
    return STUB_CELL.format(message=FORBIDDEN_MESSAGE, targets=tuple(sorted(set(targets))))


def python() -> str:
    return sys.executable


#: one grading thread at a time writes the stub sources
_STUB_LOCK = threading.Lock()


def launch(folder, sandbox, targets, stub_dir, limit, hidden=()) -> tuple:
    """Run the grading runner on ``folder`` (in the sandbox when ``sandbox``, with the
    ``targets`` stubbed): (exit code or None when it had to be killed after ``limit``
    seconds, the end of what it wrote to stderr). Used by
    :mod:`dpteach.coursework.grading`."""
    argv = [python(), "-m", "dpteach.coursework._grade_runner", str(folder)]
    if sandbox:
        with _STUB_LOCK:
            overlays, masks = stub_sources(targets, stub_dir)
        cmd = command(folder, argv, overlays=overlays, masks=masks, hidden=hideable(hidden))
        env = None
    else:
        home = folder / ".home"
        home.mkdir()
        env = {**plain_env(), "HOME": str(home), "IPYTHONDIR": str(home / "ipython"),
               "JUPYTER_RUNTIME_DIR": str(home / "jupyter"), "MPLCONFIGDIR": str(home / "mpl")}
        cmd = argv
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, env=env, start_new_session=True, cwd=str(folder))
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            try:
                os.killpg(proc.pid, 9)        # the sandbox (and with it all it started)
            except OSError:
                pass
            proc.wait()
        err.seek(0, os.SEEK_END)
        err.seek(max(0, err.tell() - 2000))
        tail = err.read().decode("utf-8", "replace")
    return code, tail
