"""The sandbox one submission runs in while it is graded (bubblewrap), and its limits.

What the sandbox shows (:func:`command`): the system's ``/usr`` (with the ``/bin`` and
``/lib`` links), the few files of ``/etc`` a program needs, the Python runtime and the
grading environment's site-packages, the kit *without the answers* of the assignment
being graded (:mod:`dpteach.coursework._kernel_kit`), the hand-in's job folder
(read-only) and a fresh ``/tmp`` of a fixed size that is its only writable place. Nothing
else of the host: no home folder, no checkout, no other hand-in, no solution, no
``.git``; its own PID namespace (no other process in ``/proc``), no network, its own IPC
and host name; the bwrap command line is read from a file descriptor, so ``/proc/1``
names no path of the host but those shown.

Who runs in it: when the grader is root, bwrap runs as root and the runner drops at once
to an unprivileged identity of its own (a user id from :data:`._isolation.UID_BASE` on,
one per sandbox running at the same time, with no other process on the host), so that
process limits bind; bwrap sets ``no_new_privs`` and mounts everything ``nosuid``. When the
grader is not root, bwrap makes a user namespace and the runner keeps the grader's user.

Limits (:class:`Limits`), each reported by name in the notebook's rows when it stopped
something: memory and processes by a control group per sandbox where the machine offers
one (cgroup v1 or v2, writable by the grader), else by ``setrlimit`` (address space,
``RLIMIT_NPROC``); disk by the size of the sandbox's tmpfs (and ``RLIMIT_FSIZE`` per
file); output (what the sandbox sends back) by the reader, which stops the sandbox past
it; CPU time by the runner, which counts the sandbox's CPU seconds, not the wall clock
(:mod:`dpteach.coursework._grade_kernel`), with a wall-clock guard ``wall_factor`` times
longer for sleeps and hangs.

:func:`launch` runs the runner in the sandbox (or, unsafe, as a plain child process),
reads what it sends back (:func:`read_frames`), and kills whatever it started when it ends
or runs out of time.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from . import _isolation, _kernel_kit

#: what a forbidden function raises while grading
FORBIDDEN_MESSAGE = _kernel_kit.REMOVED

#: the kit's package folder
_KIT = _kernel_kit.KIT
#: where the kit's copy, the runtime and the job appear inside the sandbox
KIT_MOUNT = "/opt/dpteach-kit"
JOB_MOUNT = "/job"
WORK = "/tmp/work"
#: the marker that starts each frame the runner sends back
FRAME = b"DPTEACH-FRAME "

_GIB, _MIB = 1024 ** 3, 1024 ** 2


@dataclass(frozen=True)
class Limits:
    """What one submission may use. Defaults suit a 2-core, 24 GiB machine grading two
    notebooks at once (JOBS=2), with room to spare: an honest notebook of the course
    peaks under 1 GiB and 60 processes and threads, writes a few MiB and sends back
    well under 1 MiB."""

    #: bytes of memory for everything in the sandbox (tmpfs pages included, where a
    #: control group counts them)
    memory: int = 4 * _GIB
    #: processes and threads at once
    processes: int = 256
    #: bytes of the sandbox's /tmp (its only writable place)
    disk: int = 512 * _MIB
    #: bytes the sandbox may send back: every task's result and its status, and what
    #: it writes on stderr
    output: int = 64 * _MIB
    #: the wall-clock guard, as a multiple of each CPU-time limit (plus 30 s)
    wall_factor: float = 5.0

    def describe(self) -> str:
        return (f"memory {size_text(self.memory)}, {self.processes} processes, disk "
                f"{size_text(self.disk)}, output {size_text(self.output)}, wall clock "
                f"{self.wall_factor:g} x the CPU time")


def size_text(n) -> str:
    for unit, size in (("GiB", _GIB), ("MiB", _MIB), ("KiB", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", re.IGNORECASE)


def parse_size(text, name) -> int:
    """``"4G"``, ``"512M"``, ``"65536"`` as bytes (k, M, G, T are powers of 1024); a
    ValueError naming ``name`` otherwise."""
    if isinstance(text, bool):
        raise ValueError(f"{name} must be a size such as 4G or 512M, got {text!r}")
    if isinstance(text, int):
        value = text
    else:
        m = _SIZE.fullmatch(str(text))
        if m is None:
            raise ValueError(f"{name} must be a size such as 4G or 512M, got {text!r}")
        value = int(float(m.group(1)) * 1024 ** "_kmgt".index((m.group(2) or "_").lower()))
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {text!r}")
    return value


# ------------------------------------------------------------------ the runtime
def grading_python() -> str:
    """The Python that runs inside the sandbox: ``DPTEACH_GRADE_PYTHON``, else the
    grading environment that ``make grade`` builds (``.venv-grade`` beside the kit: the
    runtime and the ``grading`` extra only, no peer library, no test tool), else this
    one."""
    chosen = os.environ.get("DPTEACH_GRADE_PYTHON")
    if chosen:
        return chosen
    venv = _KIT.parent / ".venv-grade" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


@functools.lru_cache(maxsize=4)
def runtime(python) -> dict:
    """Where ``python``'s runtime lives: its prefix, base prefix, version and the
    site-packages folders it uses; ``view``: per site-packages folder, the entries the
    kit's runtime and ``grading`` requirements install there (:func:`kernel_requirements`
    closed over what each installed distribution requires), or None where that cannot
    be told (a distribution without a file list)."""
    out = subprocess.run([python, "-I", "-c", _RUNTIME_PROBE,
                          json.dumps(kernel_requirements())],
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


#: run by the grading Python: its folders, and what the kernel's distributions hold
_RUNTIME_PROBE = r"""
import json, os, re, sys, sysconfig
import importlib.metadata as md

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

def parse(req):
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[([^\]]*)\])?", req)
    if m is None:
        return None, ()
    extras = tuple(e.strip() for e in (m.group(3) or "").split(",") if e.strip())
    return norm(m.group(1)), extras

installed = {}

def find(name):
    if name not in installed:
        try:
            installed[name] = md.distribution(name)
        except md.PackageNotFoundError:
            installed[name] = None
    return installed[name]

seen, todo, complete = {}, [(r, ()) for r in json.loads(sys.argv[1])], True
while todo:
    req, wanted = todo.pop()
    name, extras = parse(req)
    extras = tuple(extras) + tuple(wanted)
    dist = find(name) if name else None
    if dist is None:
        continue
    done = seen.setdefault(name, set())
    new = {e for e in extras if e not in done} | ({""} - done)
    if not new:
        continue
    done |= new
    for sub in dist.requires or ():
        body, _, marker = sub.partition(";")
        asked = re.findall(r"extra\s*==\s*.([A-Za-z0-9._-]+).", marker)
        if asked and not any(e in new for e in asked):
            continue
        if not asked and "" not in new:
            continue
        todo.append((body, ()))
paths = sysconfig.get_paths()
folders = sorted({os.path.realpath(paths["purelib"]), os.path.realpath(paths["platlib"])})
view = {f: set() for f in folders}
for name in seen:
    dist = installed[name]
    files = dist.files
    if files is None:
        complete = False
        continue
    base = os.path.realpath(str(dist.locate_file("")))
    if base not in view:
        complete = False
        continue
    view[base] |= {f.parts[0] for f in files if f.parts and f.parts[0] != ".."}
print(json.dumps({"prefix": sys.prefix, "base": sys.base_prefix,
                  "version": "%d.%d" % sys.version_info[:2], "purelib": paths["purelib"],
                  "base_purelib": sysconfig.get_paths(vars={"base": sys.base_prefix,
                                                            "platbase": sys.base_prefix})["purelib"],
                  "view": {f: sorted(e for e in v if e not in ("__pycache__", ""))
                           for f, v in view.items()} if complete else None}))
"""


def kernel_requirements() -> list:
    """What a grading kernel may import besides the kit: the kit's runtime requirements
    and its ``grading`` extra, as requirement strings (from ``pyproject.toml`` beside
    the kit, else the installed kit's metadata). A grading Python that holds more (the
    test environment, with the peer libraries and test tools) shows the sandbox only
    these and what they require."""
    project = _KIT.parent / "pyproject.toml"
    try:
        import tomllib

        data = tomllib.loads(project.read_text(encoding="utf-8"))["project"]
        return list(data.get("dependencies", [])) + \
            list(data.get("optional-dependencies", {}).get("grading", []))
    except (ImportError, OSError, KeyError, ValueError):
        pass
    try:
        from importlib import metadata

        reqs = metadata.requires("dpteach") or []
    except Exception:                                       # noqa: BLE001 - not installed
        return []
    return [r.split(";")[0] for r in reqs
            if ";" not in r or re.search(r"extra\s*==\s*['\"]grading['\"]", r)]


@functools.lru_cache(maxsize=1)
def available() -> tuple:
    """(True, "") when bubblewrap runs here with every option the grader uses, else
    (False, why)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False, ("bubblewrap (bwrap) is not installed: apt-get install bubblewrap "
                       "(make grade installs it with CI=true), or see notebooks/README.md")
    with tempfile.TemporaryDirectory(prefix="grade_probe_") as job:
        cmd = command(job, ["/bin/sh", "-c", "echo ok > /tmp/probe && cat /tmp/probe"],
                      kit=None, limits=Limits(disk=_MIB))
        try:
            out = _run_with_args(cmd, timeout=30)
        except (OSError, subprocess.SubprocessError) as err:
            return False, f"bubblewrap did not run: {err}"
        if out.returncode != 0 or out.stdout.strip() != b"ok":
            why = (out.stderr or out.stdout).decode("utf-8", "replace").strip()[:300]
            return False, (f"bubblewrap cannot make a sandbox here ({why or out.returncode}); "
                           "unprivileged user namespaces may be disabled "
                           "(sysctl kernel.unprivileged_userns_clone=1)")
    return True, ""


def _run_with_args(cmd, timeout):
    fd, extra = _args_file(cmd)
    try:
        return subprocess.run(extra, capture_output=True, timeout=timeout, pass_fds=(fd,))
    finally:
        os.close(fd)


def _args_file(cmd) -> tuple:
    """bwrap reads its options from a file descriptor (``--args``), so that the
    sandbox's ``/proc/1/cmdline`` is only ``bwrap --args N -- COMMAND``, naming no folder
    of the host: (fd, the short command)."""
    cut = cmd.index("--")
    bwrap, args, rest = cmd[0], cmd[1:cut], cmd[cut:]
    f = tempfile.TemporaryFile()
    f.write(b"".join(os.fsencode(a) + b"\0" for a in args))
    f.flush()
    f.seek(0)
    fd = os.dup(f.fileno())
    f.close()
    return fd, [bwrap, "--args", str(fd), *rest]


def _root() -> bool:
    return os.geteuid() == 0


def command(job, argv, *, kit, limits, python=None) -> list:
    """The bwrap command running ``argv`` with the folder ``job`` read-only at
    :data:`JOB_MOUNT`, ``kit`` (a folder holding ``dpteach/``, or None) at
    :data:`KIT_MOUNT`, the runtime of ``python`` and a fresh /tmp of ``limits.disk``
    bytes, the only writable place."""
    python = python or grading_python()
    cmd = ["bwrap", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "lib32", "sbin"):
        p = Path("/") / name
        if p.is_symlink():
            cmd += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            cmd += ["--ro-bind", str(p), str(p)]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives",
                 "nsswitch.conf", "fonts", "mime.types"):
        cmd += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    rt = runtime(python)
    mounted, made, runtime_binds = [], set(), []
    for folder in sorted({os.path.realpath(rt["base"]), os.path.realpath(rt["prefix"])}):
        if not any(_under(folder, m) for m in mounted):
            runtime_binds += [("bind", folder)]
            mounted.append(folder)
    if os.path.realpath(rt["prefix"]) != os.path.realpath(rt["base"]) and \
            os.path.isdir(rt["base_purelib"]):
        # a virtual environment: the base Python's own site-packages stay out of sight
        runtime_binds += [("hide", os.path.realpath(rt["base_purelib"]))]
    # each site-packages folder shows only what the kernel's distributions installed
    # there (no peer library, no test tool, whatever else the environment holds)
    for folder, entries in sorted((rt.get("view") or {}).items()):
        if os.path.isdir(folder) and any(_under(folder, m) for m in mounted):
            runtime_binds += [("view", folder, tuple(entries))]
    # a runtime under /tmp (a clone made there, as CI may do) is mounted after the
    # sandbox's own /tmp, which would cover it otherwise
    early = [b for b in runtime_binds if not _under(b[1], "/tmp")]
    late = [b for b in runtime_binds if _under(b[1], "/tmp")]
    cmd += _runtime_options(early, made)
    if kit is not None:
        cmd += _parents(KIT_MOUNT, made) + ["--ro-bind", str(kit), KIT_MOUNT]
    cmd += ["--ro-bind", str(Path(job).resolve()), JOB_MOUNT,
            "--perms", "1777", "--size", str(int(limits.disk)), "--tmpfs", "/tmp"]
    made.add("/tmp")
    cmd += _runtime_options(late, made)
    cmd += ["--dev", "/dev",
            # /dev/shm is writable by everyone: a small tmpfs of its own, not /dev's
            "--perms", "1777", "--size", str(int(min(limits.disk, 64 * _MIB))),
            "--tmpfs", "/dev/shm", "--proc", "/proc",
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--hostname", "grading",
            # no --die-with-parent: with it, sandboxes were killed at random here (one
            # start in eight under JOBS=2); launch() kills the sandbox's process group,
            # its control group and its user's processes itself
            "--new-session", "--clearenv"]
    if _root():
        # the runner drops to its own user id before any of the notebook's code runs
        # (bwrap run by root keeps every capability unless told: only these four stay,
        # and the runner gives them up with the bounding set when it changes user)
        cmd += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                "--cap-add", "CAP_SETPCAP", "--cap-add", "CAP_CHOWN"]
    else:
        cmd += ["--unshare-user", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL"]
    for name, value in sandbox_env(python).items():
        cmd += ["--setenv", name, value]
    return cmd + ["--chdir", "/tmp", "--", *map(str, argv)]


def _runtime_options(binds, made) -> list:
    out = []
    for kind, folder, *rest in binds:
        if kind == "bind":
            out += _parents(folder, made) + ["--ro-bind", folder, folder]
        elif kind == "view":
            out += ["--tmpfs", folder]
            for entry in rest[0]:
                path = os.path.join(folder, entry)
                if os.path.lexists(path):
                    out += ["--ro-bind", path, path]
            out += ["--remount-ro", folder]
        else:
            out += ["--tmpfs", folder, "--remount-ro", folder]
    return out


def _parents(path, made) -> list:
    """bwrap options making each folder above ``path`` (a mount point) searchable by
    anyone: bwrap would otherwise make them with the grader's umask."""
    out = []
    parts = Path(path).parts
    for i in range(2, len(parts)):
        folder = str(Path(*parts[:i]))
        if folder not in made:
            out += ["--perms", "0755", "--dir", folder]
            made.add(folder)
    return out


def _under(path, folder) -> bool:
    """``path`` is ``folder`` or inside it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def sandbox_env(python=None) -> dict:
    python = python or grading_python()
    rt = runtime(python)
    path = os.pathsep.join([os.path.join(rt["prefix"], "bin"), "/usr/local/bin", "/usr/bin",
                            "/bin"])
    return {"PATH": path, "PYTHONPATH": KIT_MOUNT, "HOME": "/tmp/home", "LANG": "C.UTF-8",
            "USER": "student", "LOGNAME": "student",
            "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/mpl",
            "JUPYTER_RUNTIME_DIR": "/tmp/jupyter", "JUPYTER_DATA_DIR": "/tmp/jupyter-data",
            "JUPYTER_CONFIG_DIR": "/tmp/jupyter-config", "IPYTHONDIR": "/tmp/ipython",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
            # one thread per numerical library: CPU seconds then measure the work alone
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def plain_env(home) -> dict:
    """The environment of the runner without the sandbox (unsafe mode)."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ",
                                                         "VIRTUAL_ENV", "PYTHONPATH")}
    env.update({"MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(home),
                "IPYTHONDIR": str(home / "ipython"), "JUPYTER_RUNTIME_DIR": str(home / "jupyter"),
                "MPLCONFIGDIR": str(home / "mpl"), "OPENBLAS_NUM_THREADS": "1",
                "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    return env


# ------------------------------------------------------------------ what comes back
def read_frames(stream, limit, out) -> None:
    """Read the runner's frames from ``stream`` (a binary pipe) into ``out``: a dict
    with ``frames`` (list of (header dict, payload bytes)), ``bytes`` (how many came) and
    ``problem`` (None, or why reading stopped: the output limit, a malformed frame).
    Reads at most ``limit`` bytes of frames; anything after a problem is drained and
    dropped, so the sandbox never blocks on a full pipe."""
    frames, total = out.setdefault("frames", []), 0
    out.setdefault("problem", None)
    try:
        while True:
            line = stream.readline(4096)
            if not line:
                break
            total += len(line)
            if not line.startswith(FRAME) or not line.endswith(b"\n"):
                out["problem"] = "the sandbox sent something that is not the grader's data"
                break
            try:
                header = json.loads(line[len(FRAME):].decode("utf-8"))
                size = int(header["size"]) if isinstance(header, dict) else -1
            except (ValueError, KeyError, TypeError):
                out["problem"] = "the sandbox sent a malformed frame"
                break
            if size < 0 or total + size > limit:
                out["problem"] = "output"
                break
            payload = stream.read(size)
            total += len(payload)
            if len(payload) != size:
                out["problem"] = "the sandbox ended in the middle of a frame"
                break
            frames.append((header, payload))
    except (OSError, ValueError):
        out["problem"] = out.get("problem") or "reading the sandbox's output failed"
    finally:
        out["bytes"] = total
        _drain(stream, out, "frames_dropped")


def _drain(stream, out, key) -> None:
    dropped = 0
    try:
        while True:
            chunk = stream.read(1 << 16)
            if not chunk:
                break
            dropped += len(chunk)
    except (OSError, ValueError):
        pass
    out[key] = dropped


def _read_tail(stream, out, keep=4000) -> None:
    """Count what comes on stderr and keep its last ``keep`` bytes."""
    tail, total = b"", 0
    try:
        while True:
            chunk = stream.read(1 << 16)
            if not chunk:
                break
            total += len(chunk)
            tail = (tail + chunk)[-keep:]
    except (OSError, ValueError):
        pass
    out["stderr_bytes"], out["stderr_tail"] = total, tail


def launch(job, *, sandbox, kit, limit, limits) -> dict:
    """Run the grading runner on the job folder ``job`` (in the sandbox when
    ``sandbox``, with the kit copy ``kit``), for at most ``limit`` wall-clock seconds.
    Returns what happened: ``code`` (exit code, or None when it was stopped),
    ``frames`` (what the runner sent back), ``problem``, ``stopped`` (the name of the
    limit that stopped it, or None), ``cgroup`` (what the control group saw),
    ``stderr_tail``. Used by :mod:`dpteach.coursework.grading`."""
    python = grading_python() if sandbox else sys.executable
    info = {"stopped": None, "cgroup": None, "uid": None}
    group, uid = None, None
    job = Path(job)
    os.chmod(job, 0o755)                  # read-only inside; the runner's identity reads it
    job_settings = json.loads((job / "job.json").read_text(encoding="utf-8"))
    if sandbox:
        if _root():
            uid = _isolation.IDENTITIES.take()
            _isolation.kill_uid(uid)
        group = _isolation.ControlGroup.make(f"g{os.getpid()}_{job.name}", limits)
        job_settings["identity"] = uid
        job_settings["limits"] = {**asdict(limits), "cgroup": group is not None}
        (job / "job.json").write_text(json.dumps(job_settings), encoding="utf-8")
        argv = [python, "-m", "dpteach.coursework._grade_runner", JOB_MOUNT, WORK]
        cmd = command(job, argv, kit=kit, limits=limits, python=python)
        fd, cmd = _args_file(cmd)
        pass_fds = (fd,)
        if group is not None:
            cmd = _isolation.join_script(group.procs_files()) + cmd
        env, cwd = {"PATH": "/usr/bin:/bin"}, "/"
    else:
        work = job / "work"
        work.mkdir()
        home = job / "home"
        home.mkdir()
        job_settings["identity"] = None
        job_settings["limits"] = {**asdict(limits), "cgroup": False}
        (job / "job.json").write_text(json.dumps(job_settings), encoding="utf-8")
        cmd = [python, "-m", "dpteach.coursework._grade_runner", str(job), str(work)]
        env, cwd, fd, pass_fds = plain_env(home), str(work), None, ()
    out = {}
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, cwd=cwd,
                                start_new_session=True, pass_fds=pass_fds)
    finally:
        if fd is not None:
            os.close(fd)
    readers = [threading.Thread(target=read_frames, args=(proc.stdout, limits.output, out),
                                daemon=True),
               threading.Thread(target=_read_tail, args=(proc.stderr, out), daemon=True)]
    for r in readers:
        r.start()
    deadline = time.monotonic() + limit
    code = None
    try:
        while True:
            try:
                code = proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                pass
            if out.get("problem") == "output" or \
                    out.get("stderr_bytes", 0) > limits.output:
                info["stopped"] = "output"
                break
            if time.monotonic() > deadline:
                info["stopped"] = "wall_clock"
                break
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)   # the sandbox (and with it all it started)
        except OSError:
            pass
        if group is not None:
            group.kill_all()
        if uid is not None:
            _isolation.kill_uid(uid)
        proc.wait()
        for r in readers:
            r.join(timeout=10)
        if group is not None:
            info["cgroup"] = group.report()
            group.remove()
        if uid is not None:
            _isolation.IDENTITIES.give(uid)
    if out.get("problem") == "output" or out.get("stderr_bytes", 0) > limits.output:
        info["stopped"] = "output"
    info.update(code=code, frames=out.get("frames", []), problem=out.get("problem"),
                stderr_tail=out.get("stderr_tail", b"").decode("utf-8", "replace"))
    return info
