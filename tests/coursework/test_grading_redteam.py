"""The red team's attacks on `make grade` (issue 30), each turned into a notebook that must
earn nothing and stop nothing, and more of our own, thought up by reading the grader.

Every attack notebook is graded in ONE batch (jobs=2, sandbox on, tightened limits so
the resource attacks hit them fast); the tests read the rows and the state of the host
afterwards. Each test checks that the attack earned 0 points for the task it went
after and that a correct A0 solution graded in the same batch (one in the middle, one
last) still got full marks.

Probes (notebooks that look for something they must not find) answer A0 like this:
``double`` doubles only when the probe found nothing, and ``answer`` carries what it
found as a string, so the row of Task 1 says whether anything leaked and the message of
Task 2 says what. The strings a probe looks for are written reversed in its source (the
source itself is inside the sandbox) and turned around only at run time.

Where an attack reaches a kit function that the sandbox removes, a control test runs the
same code in this process, against the real kit, and checks that it would have earned
the points: the attack is live, so its 0 in the sandbox means something.

The report-safety attacks of issue 30 (a function raising ``ValueError("\\ud800")``, a
lone surrogate in the metadata, a file name that is not UTF-8) are graded in
tests/test_grading_report.py and not repeated here (see
:func:`test_the_report_safety_attacks_are_graded_in_test_grading_report`).
"""

from __future__ import annotations

import dataclasses
import glob
import math
import os
import struct
import tempfile
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell as code

from dpteach.coursework import _isolation, _sandbox, assignments, grading
from dpteach.coursework.assignments import _transport

from test_grading import exercise, solution

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "notebooks" / "exercises"
KIT = ROOT / "dpteach"

#: what each submission may use in this batch: small enough that the resource attacks
#: reach the limits in seconds, large enough for an honest notebook of the course
LIMITS = dataclasses.replace(grading.LIMITS, memory=1024 ** 3, processes=128,
                             disk=64 * 1024 ** 2, output=8 * 1024 ** 2)
#: the user ids of this batch's sandboxes (a range no other grader on the machine uses)
UID_BASE = 2_000_000_000 + 7_000_000 + (os.getpid() % 1000) * 100
#: written into the solution notebooks: no other sandbox may ever see it
SOLUTION_MARKER = "redteam-solution-marker-5c1e"
SPIN_SECONDS = 15          # how long the CPU hogs spin
HOG_PROCESSES = 90         # spinning at once, under LIMITS.processes

IMPORTS = "import json, math, os, sys, time\nimport numpy as np\nimport dpteach as dp\n"


# ------------------------------------------------------------------ notebooks
def _a0(*sources):
    """The blank A0 exercise with ``sources`` as cells at its end (after its unsolved
    definitions, so what they define stays)."""
    nb = exercise()
    nb.cells += [code(s) for s in sources]
    return nb


def _a0_solved(*sources):
    """The solved A0 with ``sources`` as cells after its imports."""
    nb = solution()
    nb.cells[2:2] = [code(s) for s in sources]
    return nb


def _blank(key, *sources):
    """The blank exercise of assignment ``key`` with ``sources`` as cells at its end."""
    (path,) = glob.glob(str(EXERCISES / f"{key}_*.ipynb"))
    nb = nbformat.read(path, as_version=4)
    nb.cells += [code(s) for s in sources]
    return nb


def _rev(text) -> str:
    return str(text)[::-1]


def _probe(body, double=True) -> str:
    """A probe cell: ``body`` appends what it found to ``found``; then A0's answers say
    it (``double`` doubles only when nothing was found, unless ``body`` defines it)."""
    tail = "def double(x):\n    return 2 * x if not found else None\n" if double else ""
    return (IMPORTS + "found = []\n" + body + "\n" + tail +
            'answer = "seen:" + json.dumps([str(f)[:150] for f in found][:12])\n')


# 1. walk the filesystem for the instructor's solutions (any notebook) and run them
WALK_SOLUTIONS = """\
import json, os
_ROOT, _SKIP = "/", {"/proc", "/sys", "/dev"}
_ONLY = ""
_ran = []
for _root, _dirs, _files in os.walk(_ROOT):
    _dirs[:] = [d for d in _dirs if os.path.join(_root, d) not in _SKIP]
    for _name in _files:
        if not _name.endswith(".ipynb") or not _name.startswith(_ONLY):
            continue
        try:
            with open(os.path.join(_root, _name), encoding="utf-8") as _f:
                _cells = json.load(_f)["cells"]
        except Exception:
            continue
        for _cell in _cells:
            _src = "".join(_cell.get("source", ""))
            if _cell.get("cell_type") == "code" and "assignments.check" not in _src:
                try:
                    exec(_src, globals())
                    _ran.append(_name)
                except Exception:
                    pass
"""

# 2. an unstubbed copy of the kit anywhere on disk, imported under another name
UNSTUBBED_KIT = """\
import importlib, importlib.util, os, sys
import numpy as np
_ROOT, _SKIP = "/", {"/proc", "/sys", "/dev"}
_gs = None
for _root, _dirs, _files in os.walk(_ROOT):
    _dirs[:] = [d for d in _dirs if os.path.join(_root, d) not in _SKIP]
    if _gs is None and "sensitivity.py" in _files and "__init__.py" in _files:
        try:
            with open(os.path.join(_root, "sensitivity.py"), encoding="utf-8") as _f:
                _text = _f.read()
        except OSError:
            continue
        if "def global_sensitivity" not in _text or "is not available while" in _text:
            continue
        _alias = "kitcopy%d" % len(sys.modules)
        try:
            _spec = importlib.util.spec_from_file_location(
                _alias, os.path.join(_root, "__init__.py"), submodule_search_locations=[_root])
            _pkg = importlib.util.module_from_spec(_spec)
            sys.modules[_alias] = _pkg
            _spec.loader.exec_module(_pkg)
            _gs = importlib.import_module(_alias + ".sensitivity").global_sensitivity
        except Exception:
            _gs = None

def sum_sensitivity(M):
    return float(_gs(lambda r: np.sum(r), [0, M], 2))

def mean_sensitivity(M, n):
    return float(_gs(lambda r: np.mean(r), [0, M], n, neighbours="substitute"))

def median_sensitivity(M, n):
    return float(_gs(lambda r: np.median(r), [0, M], n, neighbours="substitute"))

def histogram_sensitivity(n_categories, neighbours, norm):
    size = 1 if neighbours == "add_remove" else 2
    return float(_gs(lambda r: np.bincount(np.asarray(r, int), minlength=n_categories),
                     np.arange(n_categories), size, neighbours=neighbours, norm=norm))
"""

# 4. the forbidden results through their private helpers
A4_ADVANCED = """\
from dpteach import accounting
def advanced_epsilon(epsilon, k, delta, delta_slack):
    return (float(accounting._advanced_epsilon(epsilon, float(k), delta_slack)),
            k * delta + delta_slack)
"""

A8_ROUTES = """\
import marshal, os, sys, types
import numpy as np
from dpteach import clipping, sparse_vector

def _chain(*routes):
    def first_working(*args, **kwargs):
        errors = []
        for route in routes:
            try:
                return route(*args, **kwargs)
            except RuntimeError as err:
                errors.append(str(err)[:100])
        raise RuntimeError(" | ".join(errors))
    return first_working

# Task 1 through the clipping module's private parts
def _via_releases(values, lower, upper, epsilon, rng):
    z = rng.laplace(0.0, 1.0, size=(2, 1))
    return float(np.ravel(clipping.clipped_mean_releases(values, lower, upper, epsilon, z))[0])

def _via_scales(values, lower, upper, epsilon, rng):
    b_sum, b_count = clipping.clipped_mean_noise_scales(lower, upper, epsilon)
    x = np.clip(np.asarray(values, float), lower, upper)
    return float(clipping.clipped_mean_ratio(x.sum() + rng.laplace(0.0, b_sum),
                                             x.size + rng.laplace(0.0, b_count), lower, upper))

my_clipped_mean = _chain(_via_releases, _via_scales)

# Task 3 by sampling from the judge's own truth function, from the module or from any
# compiled copy of it found on disk (the kit copy's __pycache__ included)
_cache = {}
def _sample(probabilities, answers, threshold, epsilon, rng, sensitivity):
    key = (id(probabilities), tuple(np.asarray(answers, float)), threshold, epsilon, sensitivity)
    if key not in _cache:                 # one integration per case, not per call
        _cache[key] = np.asarray(probabilities(answers, threshold, epsilon,
                                               sensitivity=sensitivity), float)
    p = _cache[key]
    i = int(rng.choice(p.size, p=p / p.sum()))
    return None if i == p.size - 1 else i

def _via_truth(answers, threshold, epsilon, rng, sensitivity=1.0):
    return _sample(sparse_vector.above_threshold_probabilities, answers, threshold, epsilon,
                   rng, sensitivity)

_PYC_ROOT = "/"
_from_pyc = []
for _root, _dirs, _files in os.walk(_PYC_ROOT):
    _dirs[:] = [d for d in _dirs if os.path.join(_root, d) not in ("/proc", "/sys", "/dev")]
    for _name in _files:
        if _name.startswith("sparse_vector") and _name.endswith(".pyc"):
            try:
                with open(os.path.join(_root, _name), "rb") as _f:
                    _code = marshal.loads(_f.read()[16:])
                _mod = types.ModuleType("dpteach._svcopy%d" % len(_from_pyc))
                _mod.__package__ = "dpteach"
                exec(_code, _mod.__dict__)
                _fn = _mod.above_threshold_probabilities
                _fn(np.array([0.0, 1.0]), 0.5, 1.0)
                _from_pyc.append(_fn)
            except Exception:
                continue

def _via_pyc(answers, threshold, epsilon, rng, sensitivity=1.0):
    if not _from_pyc:
        raise RuntimeError("no compiled copy found")
    return _sample(_from_pyc[0], answers, threshold, epsilon, rng, sensitivity)

my_above_threshold = _chain(_via_truth, _via_pyc)
"""

A9_ROUTES = """\
import math, types
import numpy as np
from dpteach import rdp
from dpteach.coursework.assignments import a9_dp_sgd as _a9

# Tasks 1a/1b: the judge's own search, copied with a call counter of its own
def calibrate_sigma(target_epsilon, delta, steps, q, accountant):
    space = dict(vars(_a9))
    space["_ANSWER_CALLS"] = [0]
    real = _a9.smallest_sigma
    copy = types.FunctionType(real.__code__, space, "copy", real.__defaults__)
    return float(copy(target_epsilon, delta, steps, q, accountant))

# Task 3: a peer library's private function, else the kit's private helper
def _via_peer(q, sigma, alpha):
    from dp_accounting.rdp.rdp_privacy_accountant import _compute_rdp_poisson_subsampled_gaussian
    return float(np.ravel(_compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha]))[0])

def _via_helper(q, sigma, alpha):
    log_a_minus_1 = rdp._log_a_minus_1_int(q, sigma, np.array([int(alpha)]))[0]
    return float(np.log1p(np.exp(log_a_minus_1)) / (alpha - 1))

def subsampled_rdp(q, sigma, alpha):
    errors = []
    for route in (_via_peer, _via_helper):
        try:
            return route(q, sigma, alpha)
        except (ImportError, RuntimeError) as err:
            errors.append(str(err)[:100])
    raise RuntimeError(" | ".join(errors))
"""

A10_ROUTES = """\
import math
import numpy as np
import dpteach as dp
from dpteach import beyond_global as bg

def local_sensitivity(values, lower, upper, k):
    bottom, top = bg.median_sensitivity_window(values, lower, upper, k)
    return float(top - bottom)

def smooth_sensitivity(values, lower, upper, beta):
    return max(math.exp(-k * beta) * local_sensitivity(values, lower, upper, k)
               for k in range(len(values) + 2))

# Task 2: the kit's own test-and-release recipe (the distance is allowed)
def my_ptr_median(values, lower, upper, epsilon, delta, proposed_bound, rng):
    d = dp.distance_to_instability(values, lower, upper, proposed_bound)
    x = np.sort(np.clip(np.asarray(values, float), lower, upper))
    out = bg._ptr_runs(d, bg._ptr_threshold(epsilon, delta), float(x[x.size // 2]),
                       2.0 / epsilon, 2.0 * proposed_bound / epsilon, rng, 1)[0]
    return None if np.isnan(out) else float(out)
"""

# 6. peers the grading environment must not carry
A1_PYCANON = """\
def distinct_l(table, quasi_identifiers, sensitive):
    from pycanon import anonymity
    return int(anonymity.l_diversity(table, list(quasi_identifiers), [sensitive]))
"""

# 7. A8 Task 3's collect replaced: the exact expected counts, as dyadic fractions that
# sum to the number of calls, computed with the student's own quadrature
A8_COLLECT_SWAP = """\
import numpy as np
from scipy import integrate
from dpteach.coursework import assignments as A

def _lap_cdf(x, b):
    return 0.5 * np.exp(x / b) if x < 0 else 1 - 0.5 * np.exp(-x / b)

def _probabilities(answers, threshold, epsilon, sensitivity):
    b_t, b_q = 2 * sensitivity / epsilon, 4 * sensitivity / epsilon
    k = len(answers)
    def integrand(r, i):
        f = np.exp(-abs(r) / b_t) / (2 * b_t)
        below = [_lap_cdf(threshold + r - a, b_q) for a in answers]
        if i == k:
            return f * np.prod(below)
        return f * np.prod(below[:i]) * (1 - below[i])
    span = 60 * b_t
    return np.array([integrate.quad(integrand, -span, span, args=(i,), limit=400)[0]
                     for i in range(k + 1)])

def _exact_counts(answers, request):
    out = []
    for c in request["cases"]:
        p = _probabilities(np.asarray(c["answers"], float), c["threshold"], c["epsilon"],
                           c["sensitivity"])
        counts = np.round(p / p.sum() * request["calls"] * 2 ** 20) / 2 ** 20
        counts[np.argmax(counts)] += request["calls"] - counts.sum()    # exact total
        out.append([float(v) for v in counts])
    return {"counts": out, "called_library": False}

for _t in A.tasks("A8"):
    if _t.key == "Task 3":
        object.__setattr__(_t, "collect", _exact_counts)
"""

# 9. what crosses from the kernel, made hostile
DUMPS_QUOTES = """\
from dpteach.coursework.assignments import _transport as T
_QUOTES = '"' + '\\\\"' * 1_000_000 + '"'
T.dumps = lambda obj: _QUOTES
"""

DATAFRAME_BOMB = """\
import json
from dpteach.coursework.assignments import _transport as T
_BOMB = ('{"data": {"__dataframe__": {"columns": %s, "index": %s, "data": 0}}}'
         % (json.dumps(["c%d" % i for i in range(12_000)]), json.dumps(list(range(12_000)))))
T.dumps = lambda obj: _BOMB
"""

# 10. resources, each gating Task 1 on getting through
FILL_TMP = """\
def double(x):
    written, chunk = 0, b"\\0" * (16 << 20)
    try:
        with open("/tmp/fill", "wb") as f:
            while written < 2 * 1024 ** 3:
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError:
        pass
    return 2 * x if written >= 2 * 1024 ** 3 else None
"""

FILL_SCRATCH = """\
import os
def double(x):
    written, chunk, i = 0, b"\\0" * (16 << 20), 0
    try:
        while written < 3 * 1024 ** 3:      # many files: no one file reaches the size limit
            with open(os.path.join(os.getcwd(), "fill_%d" % i), "wb") as f:
                f.write(chunk)
            written, i = written + len(chunk), i + 1
    except OSError:
        pass
    return 2 * x if written >= 3 * 1024 ** 3 else None
"""

MEMORY = """\
import numpy as np
def double(x):
    block = np.ones(2 * 1024 ** 3 // 8)          # 2 GiB, every page touched
    return 2 * x if block.sum() == block.size else None
"""

STDERR = """\
import os
def double(x):
    chunk, sent = b"e" * (1 << 20), 0
    while sent < 1024 ** 3:
        sent += os.write(2, chunk)
    return 2 * x
"""

FORK_BOMB = """\
import os, time
_children = []
def double(x):
    if not _children:
        for _ in range(1500):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(120)
                os._exit(0)
            _children.append(pid)
    return 2 * x if len(_children) >= 1500 else None
"""

DEEP_TREE = """\
import os
for top in (os.getcwd(), "/dev/shm"):
    fd = os.open(top, os.O_RDONLY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)
"""

# 11. load: a hog spinning HOG_PROCESSES processes, and an honest notebook beside it
HOG = f"""\
import os, time
until = time.monotonic() + {SPIN_SECONDS}
pids = []
for _ in range({HOG_PROCESSES}):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        try:
            while time.monotonic() < until:
                pass
        finally:
            os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
"""

HONEST_SCIPY = """\
from scipy import stats
def double(x):
    return x + x
answer = 42
def noisy_count(count, epsilon, rng):
    return count + float(stats.laplace.rvs(loc=0.0, scale=1.0 / epsilon, random_state=rng))
"""

# ------------------------------------------------------------------ our own attacks
# the runner's pipe back to the grader, opened through /proc and written to
FORGED_FRAMES = """\
import json, os
def _pipes():
    ppid, out = os.getppid(), []
    try:
        err = os.readlink("/proc/%d/fd/2" % ppid)     # stderr: the channel is another pipe
        fds = os.listdir("/proc/%d/fd" % ppid)
    except OSError:
        return []
    for fd in fds:
        try:
            link = os.readlink("/proc/%d/fd/%s" % (ppid, fd))
            if link.startswith("pipe:") and link != err:
                out.append("/proc/%d/fd/%s" % (ppid, fd))
        except OSError:
            pass
    return out

def _frame(kind, payload, **fields):
    head = json.dumps({"kind": kind, "size": len(payload), **fields}).encode()
    return b"DPTEACH-FRAME " + head + b"\\n" + payload

def double(x):
    forged = (_frame("status", json.dumps({"tasks": {"0": "ok", "1": "ok", "2": "ok"},
                                           "done": True, "notes": ["\\x1b[32m✅ all\\x1b[0m"]}).encode())
              + b"".join(_frame("result", b'{"data": "forged"}', index=i) for i in (0, 1, 2, -1, 99))
              + _frame("result", b"", index="0")
              + b"DPTEACH-FRAME {\\"kind\\": \\"result\\", \\"index\\": 0, \\"size\\": 1000000000000}\\n")
    for path in _pipes():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, forged)
            os.close(fd)
        except OSError:
            pass
    return None                       # only a forged frame could pass Task 1
"""

FRAME_FLOOD = FORGED_FRAMES.split("def double")[0] + """\
def double(x):
    flood = _frame("result", b"{}", index=0) * 50_000
    for path in _pipes():
        try:
            fd = os.open(path, os.O_WRONLY)
            os.write(fd, flood)
            os.close(fd)
            break
        except OSError:
            pass
    return None
"""

SIGNAL_EVERYTHING = """\
import os, signal
def double(x):
    try:
        os.kill(-1, signal.SIGKILL)     # every process this identity may signal
    except OSError:
        pass
    return 2 * x
"""

PATCH_BUILTINS = """\
import builtins, pickle
_real_open = builtins.open
def _open(file, mode="r", *args, **kwargs):
    if "result_" in str(file) and "w" in mode:
        real = _real_open(file, mode, *args, **kwargs)
        class Forged:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                real.write('{"data": [2, 4, 6, 8, 10]}')
                real.close()
            def write(self, text):
                return len(text)
        return Forged()
    return _real_open(file, mode, *args, **kwargs)
builtins.open = _open
pickle.load = lambda f, **kw: {"xs": [1, 2, 3, 4, 5]}
"""

RESULT_SYMLINKS = """\
import os
for i in range(3):
    try:
        os.symlink("/dev/zero", "result_%d.json" % i)
    except OSError:
        pass
"""

JUDGES_IN_KERNEL = """\
import importlib, importlib.util, inspect
from pathlib import Path
from dpteach.coursework import assignments as A
# the grader's own modules must not import; the judges' helpers may, as empty shells
for m in ("dpteach.coursework.grading", "dpteach.coursework._judging",
          "dpteach.coursework._grade_report", "dpteach.coursework._grade_shards",
          "dpteach.coursework.nbgrader_export"):
    try:
        importlib.import_module(m)
        found.append("imported " + m)
    except Exception:
        pass
for m in ("dpteach.coursework._mechanism_judge", "dpteach.coursework._mechanism_stats",
          "dpteach.coursework._anonymity_checks", "dpteach.coursework.assignments._demo"):
    try:
        mod = importlib.import_module(m)
    except Exception:
        continue
    for name, obj in list(vars(mod).items()):
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == m and \
                not name.startswith("_not_solved"):
            try:
                kept = "is not available" not in inspect.getsource(obj)
            except Exception:
                kept = False
            if kept and not (m.endswith("_demo") and name.endswith("_collect")):
                found.append("kept " + m + "." + name)
for path in sorted(Path(A.__file__).resolve().parent.parent.glob("*.py")):
    name = "dpteach.coursework._copy_" + path.stem
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except Exception:
        continue
    if any(hasattr(mod, n) for n in ("_verdict", "judge_all", "grade")):
        found.append("loaded " + path.name)
for t in A.tasks("A0"):
    for label, fn, args in (("request", t.request, (np.random.default_rng(0),)),
                            ("judge", t.judge, ([2], {"xs": [1]}, [2]))):
        try:
            fn(*args)
            found.append(t.key + " " + label + " ran")
        except Exception:
            pass
    try:
        if "Feedback(True" in inspect.getsource(t.judge):
            found.append(t.key + " judge source")
    except Exception:
        pass
"""

USERNS_ESCAPE = """\
import ctypes
HOST = [p[::-1] for p in {markers!r}]
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    code = 0
    try:
        if libc.unshare(0x10000000 | 0x00020000) == 0:          # CLONE_NEWUSER | CLONE_NEWNS
            os.makedirs("/tmp/cg", exist_ok=True)
            if libc.mount(b"cgroup", b"/tmp/cg", b"cgroup", 0, b"memory") == 0:
                code |= 2
            if any(os.path.exists(p) for p in HOST):
                code |= 4
    finally:
        os._exit(code)
_, status = os.waitpid(pid, 0)
if os.WEXITSTATUS(status):
    found.append("a new user namespace got %d" % os.WEXITSTATUS(status))
found += [p for p in HOST if os.path.exists(p)]
"""

SETUID_AND_CAPS = """\
import stat, subprocess
for line in open("/proc/self/status"):
    if line.startswith(("CapEff", "CapPrm", "CapAmb")) and int(line.split()[1], 16):
        found.append(line.strip())
if os.geteuid() == 0 or os.getuid() == 0:
    found.append("root")
try:
    os.setuid(0)
    found.append("setuid(0) worked")
except OSError:
    pass
setuid = []
for root, dirs, files in os.walk("/usr"):
    for name in files:
        path = os.path.join(root, name)
        try:
            if os.lstat(path).st_mode & (stat.S_ISUID | stat.S_ISGID):
                setuid.append(path)
        except OSError:
            pass
for path in setuid:
    for args in (["-n", "/usr/bin/id", "-u"], ["-c", "id -u"]):
        try:
            out = subprocess.run([path, *args], capture_output=True, timeout=5,
                                 stdin=subprocess.DEVNULL).stdout.split()
        except Exception:
            continue
        if out[:1] == [b"0"]:
            found.append(path + " ran as root")
"""

NETWORK = """\
import socket
for host, port in [("127.0.0.1", p) for p in (22, 53, 80, 631, 8888)] + [
        ("1.1.1.1", 53), ("8.8.8.8", 53), ("10.0.2.2", 80), ("172.17.0.1", 80)]:
    try:
        socket.create_connection((host, port), timeout=1).close()
        found.append("connected to %s:%d" % (host, port))
    except OSError:
        pass
try:
    socket.getaddrinfo("example.com", 80)
    found.append("DNS resolves")
except OSError:
    pass
names = [n for _, n in socket.if_nameindex()]
if set(names) - {"lo"}:
    found.append("interfaces " + ",".join(names))
"""

CGROUP_ESCAPE = """\
import glob
if os.path.isdir("/sys") and os.listdir("/sys"):
    found.append("/sys holds " + ",".join(sorted(os.listdir("/sys"))[:5]))
for path in glob.glob("/sys/fs/cgroup/*/cgroup.procs") + glob.glob("/sys/fs/cgroup/*/*/memory.limit_in_bytes"):
    try:
        with open(path, "w") as f:
            f.write(str(os.getpid()) if path.endswith("procs") else "-1")
        found.append("wrote " + path)
    except OSError:
        pass
_found = list(found)
def double(x):                        # 1.5 GiB, past the memory limit however it went
    block = np.ones(3 * 1024 ** 3 // 16)
    return 2 * x if block.sum() == block.size and not _found else None
"""

# writable places shared with later sandboxes: the kit copy, the runtime, the job
POISON_SHARED = """\
import site, sysconfig
from pathlib import Path
import dpteach
kit = Path(dpteach.__file__).resolve().parent
places = [kit, kit / "coursework" / "assignments", Path(sysconfig.get_paths()["purelib"]),
          Path(sys.prefix), Path(sys.base_prefix), Path("/job"), Path("/usr/lib"), Path("/etc")]
for place in places:
    for name in ("sitecustomize.py", "usercustomize.py", "zz_poison.pth"):
        try:
            (place / name).write_text("import os\\n")
            found.append("created %s/%s" % (place, name))
        except OSError:
            pass
for path in list(kit.rglob("*.py"))[:400] + list(Path("/job").glob("*")):
    try:
        with open(path, "a") as f:
            f.write("\\n")
        found.append("appended to " + str(path))
    except OSError:
        pass
    try:
        os.chmod(path, 0o777)
        found.append("chmod " + str(path))
    except OSError:
        pass
"""


def _fs_probe(needles) -> str:
    """Everything a sandbox shows: every file name, the small files outside /usr and the
    runtime, every process's command line, environment, folder, open files, mounts and
    memory, /dev; anything naming another hand-in, the host's kit or checkout, a notebook
    or a kit source but the bound one is a finding."""
    return _probe(f"""\
NEEDLES = [n[::-1] for n in {[_rev(n) for n in needles]!r}]
def look(where, text):
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    for n in NEEDLES:
        if n in text:
            found.append(where + " names " + n[:40])
skip = ("/proc", "/sys", "/dev")
big = tuple({{"/usr", sys.prefix, sys.base_prefix, os.path.realpath(sys.prefix)}})
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
    for name in files + dirs:
        path = os.path.join(root, name)
        look("a file name", path)
        if name.endswith(".ipynb"):
            found.append("a notebook " + path)
        if name == "sensitivity.py" and not path.startswith("/opt/dpteach-kit/"):
            found.append("a kit source " + path)
        if name in files and not path.startswith(big) and not path.startswith("/opt/"):
            try:
                if os.path.getsize(path) < 2_000_000:
                    with open(path, "rb") as f:
                        look(path, f.read())
            except OSError:
                pass
me = str(os.getpid())
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    base = "/proc/" + pid
    for part in ("cmdline", "environ", "mountinfo"):
        try:
            with open(base + "/" + part, "rb") as f:
                look(base + "/" + part, f.read())
        except OSError:
            pass
    try:
        fds = ["fd/" + fd for fd in os.listdir(base + "/fd")]
    except OSError:                                   # the sandbox's init is not ours
        fds = []
    for link in ["cwd", "root", "exe"] + fds:
        try:
            look(base + "/" + link, os.readlink(base + "/" + link))
        except OSError:
            pass
    if pid == me:
        continue
    try:
        with open(base + "/maps") as maps, open(base + "/mem", "rb", 0) as mem:
            for line in maps:
                span, perms = line.split()[:2]
                lo, hi = (int(v, 16) for v in span.split("-"))
                if "r" not in perms or hi - lo > 256 * 1024 * 1024:
                    continue
                try:
                    mem.seek(lo)
                    look(base + "/mem", mem.read(hi - lo))
                except (OSError, ValueError, OverflowError):
                    pass
    except OSError:
        pass
extra = set(os.listdir("/dev")) - {{"null", "zero", "full", "random", "urandom", "tty",
                                   "pts", "ptmx", "shm", "fd", "stdin", "stdout", "stderr",
                                   "core", "console", "mqueue", "hugepages"}}
if extra:
    found.append("/dev holds " + ",".join(sorted(extra)))
""")


def _cmdline_probe(needles) -> str:
    return _probe(f"""\
NEEDLES = [n[::-1] for n in {[_rev(n) for n in needles]!r}]
for pid in ["1", "self"] + [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            text = f.read().replace(b"\\0", b" ").decode("utf-8", "replace")
    except OSError:
        continue
    found += ["/proc/%s/cmdline: %s" % (pid, n[:40]) for n in NEEDLES if n in text]
    if ".ipynb" in text:
        found.append("/proc/%s/cmdline names a notebook" % pid)
""")


# name -> (the file name's stem, the notebook) ; the tests say what each must earn
def _notebooks(needles, host_markers):
    honest = _a0(HONEST_SCIPY)
    marked = _a0_solved(f"# {SOLUTION_MARKER}")
    return {
        # 11. load: first, so the hog spins while the honest notebooks are graded
        "hog": ("A0_hog", _a0(HOG)),
        "honest_beside_hog": ("A0_honest_beside_hog", honest),
        "honest_beside_hog_2": ("A0_honest_beside_hog_2", honest),
        # issue 30's attacks
        "walk_solutions": ("A3_walk_solutions", _blank("A3", WALK_SOLUTIONS)),
        "unstubbed_kit": ("A3_unstubbed_kit", _blank("A3", UNSTUBBED_KIT)),
        "proc_cmdline": ("A0_proc_cmdline", _a0(_cmdline_probe(needles))),
        "a4_private_helper": ("A4_private_helper", _blank("A4", A4_ADVANCED)),
        "a8_helpers_and_truth": ("A8_helpers_and_truth", _blank("A8", A8_ROUTES)),
        "a9_truth_helper_peer": ("A9_truth_helper_peer", _blank("A9", A9_ROUTES)),
        "a10_helpers": ("A10_helpers", _blank("A10", A10_ROUTES)),
        "a1_pycanon": ("A1_pycanon", _blank("A1", A1_PYCANON)),
        "a8_collect_swap": ("A8_collect_swap", _blank("A8", A8_COLLECT_SWAP)),
        "dumps_quotes": ("A0_dumps_quotes", _a0_solved(DUMPS_QUOTES)),
        "dataframe_bomb": ("A0_dataframe_bomb", _a0_solved(DATAFRAME_BOMB)),
        "solution_middle": ("A0_solution_middle", marked),
        "fill_tmp": ("A0_fill_tmp", _a0(FILL_TMP)),
        "fill_scratch": ("A0_fill_scratch", _a0(FILL_SCRATCH)),
        "memory": ("A0_memory", _a0(MEMORY)),
        "stderr": ("A0_stderr", _a0(STDERR)),
        "fork_bomb": ("A0_fork_bomb", _a0(FORK_BOMB)),
        "deep_tree": ("A0_deep_tree", _a0_solved(DEEP_TREE)),
        # our own
        "fs_probe": ("A0_fs_probe", _a0(_fs_probe(needles))),
        "forged_frames": ("A0_forged_frames", _a0(FORGED_FRAMES)),
        "frame_flood": ("A0_frame_flood", _a0(FRAME_FLOOD)),
        "signal_everything": ("A0_signal_everything", _a0(SIGNAL_EVERYTHING)),
        "patch_builtins": ("A0_patch_builtins", _a0(PATCH_BUILTINS)),
        "result_symlinks": ("A0_result_symlinks", _a0_solved(RESULT_SYMLINKS)),
        "judges_in_kernel": ("A0_judges_in_kernel", _a0(_probe(JUDGES_IN_KERNEL))),
        "userns_escape": ("A0_userns_escape",
                          _a0(_probe(USERNS_ESCAPE.format(markers=[_rev(m) for m in host_markers])))),
        "setuid_and_caps": ("A0_setuid_and_caps", _a0(_probe(SETUID_AND_CAPS))),
        "network": ("A0_network", _a0(_probe(NETWORK))),
        "cgroup_escape": ("A0_cgroup_escape", _a0(_probe(CGROUP_ESCAPE, double=False))),
        "poison_shared": ("A0_poison_shared", _a0(_probe(POISON_SHARED))),
        "solution_last": ("A0_zz_solution_last", marked),
    }


def _sandbox_processes():
    """pids of the host running as one of this batch's sandbox identities."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if UID_BASE <= proc.stat().st_uid < UID_BASE + 100:
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


def _floats(obj, out):
    """Every non-integral float in ``obj`` (nested containers, arrays)."""
    if isinstance(obj, dict):
        for v in obj.values():
            _floats(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _floats(v, out)
    elif isinstance(obj, np.ndarray) and obj.dtype.kind == "f":
        for v in obj.ravel()[:2000]:
            _floats(float(v), out)
    elif isinstance(obj, (float, np.floating)) and math.isfinite(obj) and obj != int(obj):
        out.add(float(obj))
    return out


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    handins = tmp_path_factory.mktemp("handins")
    scratch = tmp_path_factory.mktemp("scratch")     # the grader's temporary folder here
    needles = [str(handins), "zz_solution_last", "solution_middle", SOLUTION_MARKER,
               str(KIT), str(ROOT / ".git")]
    host_markers = [str(p) for p in (KIT, ROOT / ".git", ROOT / "notebooks",
                                     Path("/etc/shadow"), Path("/etc/hostname"))
                    if p.exists()]
    notebooks = _notebooks(needles, host_markers)
    paths = {}
    for key, (stem, nb) in notebooks.items():
        paths[key] = handins / f"{stem}.ipynb"
        nbformat.write(nb, paths[key])
    alone_folder = tmp_path_factory.mktemp("alone")
    alone_path = alone_folder / "A0_honest_alone.ipynb"
    nbformat.write(_a0(HONEST_SCIPY), alone_path)
    order = list(notebooks)
    drawn, jobs = [], []
    real_draws, real_launch = grading._draws, _sandbox.launch

    def draws(tasks, seed, repeats):
        out = real_draws(tasks, seed, repeats)
        drawn.extend(out)
        return out

    def launch(job, **kwargs):
        files = {p.name: p.read_bytes() for p in Path(job).iterdir() if p.is_file()}
        jobs.append(files)
        return real_launch(job, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grading, "NAMEABLE", grading.NAMEABLE | {"A0"})
        mp.setattr(_isolation, "UID_BASE", UID_BASE)
        mp.setattr(tempfile, "tempdir", str(scratch))
        mp.setattr(grading, "_draws", draws)
        mp.setattr(_sandbox, "launch", launch)
        alone = grading.grade([alone_path], timeout=60, task_timeout=30, limits=LIMITS)
        t0 = time.monotonic()
        rows = grading.grade([paths[k] for k in order], timeout=60, task_timeout=30,
                             jobs=2, limits=LIMITS, root=handins)
        seconds = time.monotonic() - t0
        left_processes = _sandbox_processes()
        left_folders = sorted(p.name for p in scratch.iterdir() if p.name.startswith("grade_"))
    by = {}
    names = {paths[k].name: k for k in order}
    for r in rows:
        by.setdefault(names[r.notebook], {})[r.task] = r
    groups = [g for ctl in ("memory", "pids") for g in
              glob.glob(f"/sys/fs/cgroup/{ctl}/{_isolation.ControlGroup.PARENT}/g{os.getpid()}_*")]
    print(f"\nred-team batch: {len(order)} notebooks, {len(rows)} rows, {seconds:.0f} s")
    return {"by": by, "seconds": seconds, "alone": {r.task: r for r in alone},
            "left_processes": left_processes, "left_folders": left_folders,
            "groups": groups, "drawn": drawn, "jobs": jobs}


def _points(rows, tasks=None):
    return sum(float(r.points) for t, r in rows.items() if tasks is None or t in tasks)


def _messages(rows):
    return {t: r.message for t, r in rows.items()}


def _nothing_stopped(batch):
    for key in ("solution_middle", "solution_last"):
        rows = batch["by"][key]
        assert _points(rows) == 4, _messages(rows)


def _earned_nothing(batch, key, tasks=None):
    rows = batch["by"][key]
    assert rows and _points(rows, tasks) == 0, _messages(rows)
    if tasks is not None:
        assert set(tasks) <= set(rows), (tasks, list(rows))
    _nothing_stopped(batch)
    return rows


def _probe_found_nothing(batch, key):
    rows = batch["by"][key]
    assert "seen:[]" in rows["Task 2"].message, rows["Task 2"].message
    assert rows["Task 1"].passed, rows["Task 1"].message
    _nothing_stopped(batch)


# ------------------------------------------------------------------ issue 30's attacks
@pytest.mark.slow
def test_walking_the_filesystem_finds_no_solution_to_run(batch):
    _earned_nothing(batch, "walk_solutions")


@pytest.mark.slow
def test_no_unstubbed_copy_of_the_kit_gives_global_sensitivity_back(batch):
    rows = _earned_nothing(batch, "unstubbed_kit",
                           ["Task 1", "Task 2a", "Task 2b", "Task 3a", "Task 3b"])
    # the search found no copy at all (its function stayed None)
    assert "'NoneType' object is not callable" in rows["Task 1"].message, rows["Task 1"].message


@pytest.mark.slow
def test_no_command_line_in_proc_names_another_hand_in(batch):
    _probe_found_nothing(batch, "proc_cmdline")


@pytest.mark.slow
def test_the_private_helper_of_advanced_composition_is_gone(batch):
    rows = _earned_nothing(batch, "a4_private_helper", ["Task 3"])
    assert 'is not available' in rows['Task 3'].message, rows['Task 3'].message


@pytest.mark.slow
def test_the_clipped_mean_s_private_parts_are_gone(batch):
    rows = _earned_nothing(batch, "a8_helpers_and_truth", ["Task 1"])
    assert 'is not available' in rows['Task 1'].message, rows['Task 1'].message


@pytest.mark.slow
def test_the_sparse_vector_truth_function_is_gone_from_source_and_bytecode(batch):
    rows = _earned_nothing(batch, "a8_helpers_and_truth", ["Task 3"])
    assert 'no compiled copy found' in rows['Task 3'].message, rows['Task 3'].message


@pytest.mark.slow
def test_the_judge_s_sigma_search_cannot_be_copied_with_a_fresh_counter(batch):
    rows = _earned_nothing(batch, "a9_truth_helper_peer", ["Task 1a", "Task 1b"])
    assert 'smallest_sigma is not available' in rows['Task 1b'].message, rows['Task 1b'].message


@pytest.mark.slow
def test_neither_dp_accounting_nor_the_rdp_helper_gives_task_3(batch):
    rows = _earned_nothing(batch, "a9_truth_helper_peer", ["Task 3"])
    assert "No module named 'dp_accounting'" in rows['Task 3'].message, rows['Task 3'].message


@pytest.mark.slow
def test_the_median_window_and_the_ptr_recipe_are_gone(batch):
    rows = _earned_nothing(batch, "a10_helpers", ["Task 1a", "Task 1b", "Task 2"])
    assert 'is not available' in rows['Task 2'].message, rows['Task 2'].message


@pytest.mark.slow
def test_pycanon_is_not_importable_while_grading(batch):
    rows = _earned_nothing(batch, "a1_pycanon", ["Task 3"])
    assert "No module named 'pycanon'" in rows['Task 3'].message, rows['Task 3'].message


@pytest.mark.slow
def test_a_swapped_collect_sending_exact_fractional_counts_earns_nothing(batch):
    rows = _earned_nothing(batch, "a8_collect_swap", ["Task 3"])
    assert "whole" in rows["Task 3"].message or "count" in rows["Task 3"].message, \
        rows["Task 3"].message


def test_the_report_safety_attacks_are_graded_in_test_grading_report():
    """Item 8 of the issue's list (a lone surrogate raised by a student's function or in
    the metadata, a file name that is not UTF-8) is graded there, on a whole batch."""
    text = (ROOT / "tests" / "coursework" / "test_grading_report.py").read_text(encoding="utf-8")
    for needle in ('raise ValueError("\\\\ud800")', '"A0\\ud800"', 'b"A0_badname_\\xff.ipynb"',
                   "def test_every_odd_text_leaves_a_complete_report_and_exit_code_0"):
        assert needle in text, needle


@pytest.mark.slow
@pytest.mark.parametrize("key", ["dumps_quotes", "dataframe_bomb"])
def test_a_hostile_result_costs_the_grader_nothing(batch, key):
    rows = _earned_nothing(batch, key)
    assert [r.task for r in rows.values()] == ["Task 1", "Task 2", "Task 3"]


@pytest.mark.slow
@pytest.mark.parametrize("key, limit", [("fill_tmp", "disk limit"),
                                        ("fill_scratch", "disk limit"),
                                        ("memory", "memory limit"), ("stderr", "output limit"),
                                        ("fork_bomb", "process limit")])
def test_a_resource_attack_is_stopped_by_its_limit_and_its_row_names_it(batch, key, limit):
    rows = _earned_nothing(batch, key, ["Task 1"])
    assert limit in rows["Task 1"].message, _messages(rows)


@pytest.mark.slow
def test_a_3000_level_tree_costs_its_notebook_nothing_and_is_removed(batch):
    rows = batch["by"]["deep_tree"]
    assert _points(rows) == 4, _messages(rows)
    assert batch["left_folders"] == []


@pytest.mark.slow
def test_nothing_of_a_sandbox_outlives_the_batch(batch):
    assert batch["left_processes"] == []
    assert _sandbox_processes() == []
    assert batch["left_folders"] == []
    assert batch["groups"] == []


@pytest.mark.slow
def test_honest_notebooks_beside_cpu_hogs_get_the_verdicts_they_get_alone(batch):
    alone = {t: r.passed for t, r in batch["alone"].items()}
    assert alone == {"Task 1": True, "Task 2": True, "Task 3": True}, batch["alone"]
    for key in ("honest_beside_hog", "honest_beside_hog_2"):
        rows = batch["by"][key]
        assert {t: r.passed for t, r in rows.items()} == alone, _messages(rows)


@pytest.mark.slow
def test_every_notebook_of_the_batch_has_a_row_for_every_task(batch):
    """However the attacks behave, the batch ends with every notebook graded on every task
    of its assignment (how long it takes is a benchmark's business, not a test's:
    benchmarks/bench_grading.py)."""
    assert batch["by"]
    for key, rows in batch["by"].items():
        graded = set(rows) - {grading.NOTEBOOK_ROW}
        if not graded:                        # a notebook refused as a whole has one row
            continue
        assignment = next(iter(rows.values())).assignment
        assert graded == {t.key for t in assignments.tasks(assignment)}, (key, sorted(rows))


# ------------------------------------------------------------------ our own attacks
@pytest.mark.slow
def test_the_sandbox_shows_no_other_hand_in_no_notebook_and_no_other_kit(batch):
    _probe_found_nothing(batch, "fs_probe")


@pytest.mark.slow
@pytest.mark.parametrize("key", ["forged_frames", "frame_flood", "signal_everything",
                                 "patch_builtins"])
def test_writing_into_the_runner_s_channel_or_signalling_it_earns_nothing(batch, key):
    _earned_nothing(batch, key)


@pytest.mark.slow
def test_result_files_made_symlinks_are_not_followed(batch):
    _earned_nothing(batch, "result_symlinks")


@pytest.mark.slow
def test_the_judge_halves_do_not_import_or_run_in_the_kernel(batch):
    _probe_found_nothing(batch, "judges_in_kernel")


@pytest.mark.slow
@pytest.mark.parametrize("key", ["userns_escape", "setuid_and_caps", "network",
                                 "poison_shared"])
def test_no_way_out_of_the_sandbox(batch, key):
    _probe_found_nothing(batch, key)


@pytest.mark.slow
def test_the_control_groups_cannot_be_reached_and_the_memory_limit_holds(batch):
    rows = batch["by"]["cgroup_escape"]
    assert "seen:[]" in rows["Task 2"].message, rows["Task 2"].message
    _earned_nothing(batch, "cgroup_escape", ["Task 1"])


@pytest.mark.slow
def test_no_truth_crosses_into_a_sandbox(batch):
    """What each job folder held (its job.json and pickled requests) holds no
    non-integral number of any truth drawn for the batch that its request does not
    hold itself."""
    blobs = b"".join(b for files in batch["jobs"] for b in files.values())
    assert batch["drawn"] and batch["jobs"]
    checked = 0
    for task, request, truth in batch["drawn"]:
        mine = _floats(request, set())
        for x in _floats(truth, set()) - mine:
            if len(repr(x)) < 10:              # too short to tell from a coincidence
                continue
            assert struct.pack(">d", x) not in blobs, (task.key, x)      # a pickled float
            assert struct.pack("<d", x) not in blobs, (task.key, x)      # an array's bytes
            assert repr(x).encode() not in blobs, (task.key, x)          # JSON text
            checked += 1
    assert checked > 20


# ------------------------------------------------------------------ the attacks are live
def _live(key, task_key, source, seeds=(1, 2)):
    """Whether ``source`` answers ``task_key`` of ``key`` correctly with the real kit,
    here, through the transport."""
    space = {}
    exec(IMPORTS + source, space)
    task = assignments._task(key, task_key)
    for seed in seeds:
        request, truth = task.request(np.random.default_rng(seed))
        data = task.collect({n: space[n] for n in task.names}, request)
        data = _transport.loads(_transport.dumps({"data": data}))["data"]
        feedback = task.judge(data, request, truth)
        if not feedback.passed:
            return False, feedback.message
    return True, ""


def _here(source, root, only=""):
    """The attack's search started at ``root`` of this machine (the checkout's
    environments skipped), only notebooks starting ``only``."""
    skip = {str(ROOT / d) for d in (".venv", ".venv-grade", ".git", "test-artifacts")}
    return source.replace('_ROOT, _SKIP = "/", {"/proc", "/sys", "/dev"}',
                          f"_ROOT, _SKIP = {str(root)!r}, {skip!r}").replace(
                          '_ONLY = ""', f"_ONLY = {only!r}")


# (the A8 Task 1, A10 and A1 routes are left out: run here, the collect's own guard
# already refuses them as calls into the kit, a second line behind the missing code)
@pytest.mark.slow
@pytest.mark.parametrize("key, task_key, source", [
    ("A3", "Task 1", _here(WALK_SOLUTIONS, ROOT / "notebooks" / "solutions", "A3_")),
    ("A3", "Task 3a", _here(WALK_SOLUTIONS, ROOT / "notebooks" / "solutions", "A3_")),
    ("A3", "Task 1", _here(UNSTUBBED_KIT, ROOT)),
    ("A3", "Task 2b", _here(UNSTUBBED_KIT, ROOT)),
    ("A3", "Task 3b", _here(UNSTUBBED_KIT, ROOT)),
    ("A4", "Task 3", A4_ADVANCED),
    ("A8", "Task 3", A8_ROUTES.replace('_PYC_ROOT = "/"', '_PYC_ROOT = "/nonexistent"')),
    ("A9", "Task 1a", A9_ROUTES),
    ("A9", "Task 3", A9_ROUTES),
    ("A9", "Task 3", A9_ROUTES.replace("(_via_peer, _via_helper)", "(_via_helper,)")),
])
def test_the_attack_earns_the_points_with_the_real_kit(key, task_key, source):
    passed, message = _live(key, task_key, source)
    assert passed, message


def test_the_judges_probe_finds_them_with_the_real_kit():
    space = {"np": np, "found": []}
    exec(IMPORTS + "found = []\n" + JUDGES_IN_KERNEL, space)
    assert any(f.startswith("imported dpteach.coursework.grading") for f in space["found"])
    assert "Task 1 judge ran" in space["found"]


def test_the_swapped_collect_would_fit_perfectly():
    """The counts the swapped collect sends match the judge's truth to within 1e-6 of a
    call (what only the exact probabilities can do), and are not whole."""
    space = {}
    exec(A8_COLLECT_SWAP.replace('for _t in A.tasks("A8")', 'for _t in []'), space)
    task = assignments._task("A8", "Task 3")
    request, truth = task.request(np.random.default_rng(3))
    counts = space["_exact_counts"](None, request)["counts"]
    assert any(c != int(c) for case in counts for c in case)
    assert all(sum(case) == request["calls"] for case in counts)
    assert np.isfinite(np.concatenate([np.asarray(c, float) for c in counts])).all()
