"""Judging one notebook's results within a budget of its own.

What a sandbox sends back is hostile data. The decoder caps its sizes, but a judge is
ordinary Python in the grader: an input it was never shown could still cost it minutes
or gigabytes, and in the grader's own process that would hold the other notebooks'
threads too. So each notebook's results are judged in a child process (forked from a
server process that has the kit loaded, so a child starts in milliseconds) with a memory
limit (address space) and a CPU limit of its own, and the grader waits for it at most a
wall-clock multiple of that. A verdict the child did not deliver is a failed task that
says which limit it ran into; the other notebooks never notice.
"""

from __future__ import annotations

import multiprocessing
import resource
import threading
import time

from . import assignments
from .assignments import _transport
from ._grade_report import MAX_RESULT_BYTES, read_result

#: CPU seconds one task's judging may take, and the floor for a notebook
JUDGE_CPU_PER_TASK = 30.0
#: bytes a judging child may add to the address space it starts with
JUDGE_MEMORY = 4 * 1024 ** 3
#: the wall-clock guard, as a multiple of the CPU budget
JUDGE_WALL_FACTOR = 5.0

_CONTEXT = None
_LOCK = threading.Lock()


def _context():
    global _CONTEXT
    with _LOCK:
        if _CONTEXT is None:
            try:
                ctx = multiprocessing.get_context("forkserver")
                ctx.set_forkserver_preload(["dpteach.coursework._judging",
                                            "dpteach.coursework._judge_preload"])
            except ValueError:                              # no forkserver on this platform
                ctx = multiprocessing.get_context("spawn")
            _CONTEXT = ctx
    return _CONTEXT


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def verdict(task, result_path, request, truth, notes=()) -> tuple:
    """(passed, message) from the result file the kernel wrote (untrusted bytes)."""
    try:
        text = read_result(result_path)
        if text is None:
            return False, (f"{task.key}: the result is not a file of at most "
                           f"{MAX_RESULT_BYTES} bytes")
        envelope = _transport.loads(text)          # sizes, depth and shapes capped
    except FileNotFoundError:
        return False, f"{task.key}: no result came back from the notebook"
    except _transport.ResultRefused as err:
        return False, f"{task.key}: {str(err)[:300]}"
    except MemoryError:
        raise                       # the child names the memory limit (_child)
    except Exception as err:                                # noqa: BLE001 - untrusted bytes
        return False, f"{task.key}: the result is not valid data ({type(err).__name__})"
    if not isinstance(envelope, dict) or len(envelope) != 1:
        return False, f"{task.key}: the result is not valid data"
    if "missing" in envelope:
        missing = envelope["missing"]
        names = ", ".join(map(str, missing)) if isinstance(missing, list) else "?"
        why = f" ({'; '.join(notes)})" if notes else ""
        return False, f"{task.key}: not answered: {names} is not defined{why}"
    if "error" in envelope:
        return False, f"{task.key}: your code raised {str(envelope['error'])[:300]}"
    if "data" not in envelope:
        return False, f"{task.key}: the result is not valid data"
    try:
        feedback = task.judge(envelope["data"], request, truth)
        return feedback.passed is True, str(feedback.message)
    except MemoryError:
        raise
    except Exception as err:                                # noqa: BLE001 - odd data
        return False, f"{task.key}: the answer could not be judged ({type(err).__name__}: {err})"


def _child(conn, assignment, items, notes, cpu, memory) -> None:
    """In the child: the limits, then one verdict after another down ``conn``."""
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu) + 1, int(cpu) + 2))
        if memory:
            limit = _vm_size() + int(memory)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass
    tasks = {t.key: t for t in assignments.tasks(assignment)}
    for task_key, path, request, truth in items:
        try:
            got = verdict(tasks[task_key], path, request, truth, notes)
        except MemoryError:
            got = (False, f"{task_key}: the answer could not be judged within the "
                          "grader's memory limit")
        except Exception as err:                            # noqa: BLE001 - odd data
            got = (False, f"{task_key}: the answer could not be judged "
                          f"({type(err).__name__})")
        conn.send((bool(got[0]), str(got[1])[:2000]))
    conn.close()


def judge_all(assignment, judged, notes, limits=None) -> list:
    """The verdicts ``(passed, message)`` of ``judged`` (``(index, task, result path,
    request, truth)`` tuples of one notebook), in order, each judged in a child process
    under the notebook's judging budget."""
    if not judged:
        return []
    items = [(task.key, str(path), request, truth) for _, task, path, request, truth in judged]
    cpu = JUDGE_CPU_PER_TASK * len(items) + 10
    wall = JUDGE_WALL_FACTOR * cpu + 30
    ctx = _context()
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, assignment, items, list(notes), cpu,
                                            JUDGE_MEMORY), daemon=True)
    proc.start()
    child.close()
    out = []
    deadline = time.monotonic() + wall
    why = None
    try:
        while len(out) < len(items):
            left = deadline - time.monotonic()
            if left <= 0:
                why = f"the grader's judging time ({wall:g} s)"
                break
            if parent.poll(min(left, 1.0)):
                try:
                    out.append(parent.recv())
                except (EOFError, OSError):
                    why = "the grader's judging limits (it ran out of CPU time or memory)"
                    break
            elif not proc.is_alive() and not parent.poll(0):
                why = "the grader's judging limits (it ran out of CPU time or memory)"
                break
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()
    for task_key, *_ in items[len(out):]:
        out.append((False, f"{task_key}: the answer could not be judged within {why}"))
    return out
