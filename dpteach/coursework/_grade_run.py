"""One notebook's run, step by step: its requests written for the sandbox, the kit the
kernel gets (without the answers), the sandbox launched, what came back read as data
only, and each result judged (:mod:`._judging`) into a verdict ``(passed, message)``.
:mod:`.grading` calls :func:`run_part` once per group of tasks."""

from __future__ import annotations

import json
import os
import pickle
import secrets
import tempfile
import threading
from pathlib import Path

from . import _judging, _kernel_cells, _sandbox
from ._grade_kernel import code_cells
from ._grade_report import MAX_RESULT_BYTES

__all__ = ["forbidden_targets", "allowed_targets", "run_part", "remove",
           "MAX_SENT_RESULT"]


def forbidden_targets(tasks, allowed=()) -> list:
    """The kit functions (``"dpteach.<module>:<name>"``) any of ``tasks`` forbids: the
    union of their declared ``forbidden``, less the assignment's ``allowed``."""
    return sorted({t for task in tasks for t in task.forbidden} - set(allowed))


def allowed_targets(assignment) -> list:
    """The kit functions (``"dpteach.<module>:<name>"``) ``assignment`` lets every task
    use (its module's ``ALLOWED``): the grading kernel keeps them even where a judge
    computes its truth with them."""
    from . import assignments

    return sorted(assignments.allowed(assignment))


def remove(folder):
    """Remove a job folder whatever its modes and depth (an iterative walk from the
    bottom: no recursion for a deep tree to exhaust; never follows a symlink)."""
    folder = str(folder)
    for _ in range(3):
        try:
            for root, dirs, files in os.walk(folder, topdown=False):
                for name in files + dirs:
                    path = os.path.join(root, name)
                    try:
                        if os.path.isdir(path) and not os.path.islink(path):
                            os.rmdir(path)
                        else:
                            os.unlink(path)
                    except OSError:
                        try:
                            os.chmod(root, 0o700)
                        except OSError:
                            pass
            os.rmdir(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            continue


def status_of(frames) -> dict:
    """The last status the runner sent (as data; {} if none or malformed)."""
    for header, payload in reversed(frames):
        if isinstance(header, dict) and header.get("kind") == "status":
            try:
                if len(payload) > 1_000_000:
                    return {}
                status = json.loads(payload.decode("utf-8"))
            except (ValueError, UnicodeDecodeError, RecursionError):
                return {}
            return status if isinstance(status, dict) else {}
    return {}


#: one grading thread at a time builds a kernel's kit
_KIT_LOCK = threading.Lock()


def kit_for(stub_dir, key, tasks, targets, needs, requests) -> Path:
    """The kernel's kit for this group (built once per batch and plan): the kit without
    the ``targets``, what computes them and the judges (:mod:`._kernel_kit`)."""
    from . import _kernel_kit

    pickled = _kernel_kit.pickled_globals(requests)
    allowed = allowed_targets(key)
    with _KIT_LOCK:
        plan = _kernel_kit.plan(tasks, targets, needs, pickled, allowed)
        folder = Path(stub_dir) / f"kit_{_kernel_kit.key(plan)}"
        if not folder.exists():
            tmp = Path(tempfile.mkdtemp(prefix="kit_", dir=str(stub_dir)))
            _kernel_kit.build(tmp, plan)
            os.replace(tmp, folder)
    return folder


#: the largest result one task may send back (bytes), before the judge's own caps
MAX_SENT_RESULT = MAX_RESULT_BYTES


def run_part(nb, name, key, tasks, draws, targets, needs, verdicts, *, timeout,
              task_timeout, notes, sandbox, stub_dir, limits) -> None:
    """Run the notebook once in a fresh sandbox whose kit goes without ``targets`` (and
    all that computes them), and judge ``draws`` there: each verdict is appended to
    ``verdicts[task key]``."""
    folder = Path(tempfile.mkdtemp(prefix="grade_"))
    try:
        requests = []
        job = {"cells": code_cells(nb), "assignment": key, "timeout": timeout,
               "task_timeout": task_timeout, "tasks": [], "sandboxed": bool(sandbox),
               "prelude": _kernel_cells.prelude_cell(targets, sandboxed=bool(sandbox)),
               "max_result_bytes": int(MAX_SENT_RESULT)}
        for i, (task, request, _truth) in enumerate(draws):
            token = secrets.token_hex(8)
            blob = pickle.dumps(request)
            requests.append(blob)
            with open(folder / f"request_{i}.pkl", "xb") as f:
                f.write(blob)
            job["tasks"].append({"index": i, "key": task.key, "names": list(task.names),
                                 "request": f"request_{i}.pkl", "result": f"result_{i}.json",
                                 "token": token})
        # CPU seconds: the cells, then the tasks, each within ``timeout``; the wall-clock
        # guard is wall_factor times that, with kernel starts and restarts on top
        cpu = 2 * timeout + 10 * (2 + len(draws) // 4)
        limit = limits.wall_factor * cpu + 120
        job["cpu_backstop"] = int(cpu * 1.5 + 120)     # per process, should all else fail
        (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
        kit = kit_for(stub_dir, key, tasks, targets, needs, requests) if sandbox else None
        ran = _sandbox.launch(folder, sandbox=sandbox, kit=kit, limit=limit,
                              limits=limits)
        # the sandbox is gone: from here on only data is read
        frames = ran["frames"]
        status = status_of(frames)
        states = status.get("tasks") if isinstance(status.get("tasks"), dict) else {}
        run_notes = status.get("notes") if isinstance(status.get("notes"), list) else []
        notes += [str(n)[:300] for n in run_notes[:20]]
        stopped = stopped_by(ran, limits, limit)
        # a limit the notebook ran into is named in every task row it may have cost
        reached = stopped or (f"disk limit: the notebook filled its "
                              f"{_sandbox.size_text(limits.disk)} of scratch space"
                              if any(str(n).startswith("disk:") for n in run_notes) else "")
        if stopped:
            notes.append(stopped)
        elif status.get("done") is not True:
            tail = ran.get("stderr_tail", "").strip()
            notes.append(f"the sandbox ended before grading was done (exit code "
                         f"{ran.get('code')})" + (f": {tail.splitlines()[-1][:200]}"
                                                  if tail else ""))
        results = {}
        for header, payload in frames:
            if header.get("kind") == "result" and isinstance(header.get("index"), int):
                results[header["index"]] = payload
        judged = []
        for i, (task, request, truth) in enumerate(draws):
            state = states.get(str(i))
            if state == "timeout":
                verdict = (False, f"{task.key}: timed out (your code used more than "
                                  f"{task_timeout:g} CPU seconds)")
            elif state == "wall_timeout":
                verdict = (False, f"{task.key}: timed out (your code waited past the "
                                  f"wall-clock guard of {limits.wall_factor * task_timeout + 30:g} s: "
                                  "a sleep or a hang)")
            elif state == "died":
                verdict = (False, f"{task.key}: your code ended the kernel while it was "
                                  "being graded" + (f" ({stopped})" if stopped else ""))
            elif state == "grading_timeout":
                verdict = (False, f"{task.key}: timed out (all the tasks together used more "
                                  f"than {timeout:g} CPU seconds)")
            elif i not in results:
                verdict = (False, f"{task.key}: no result came back from the notebook" +
                           (f" ({stopped})" if stopped else
                            " (the sandbox ended before this task was collected)"
                            if state is None else ""))
            else:
                path = folder / f"result_{i}.json"
                path.write_bytes(results[i])
                judged.append((i, task, path, request, truth))
                continue
            verdicts.setdefault(task.key, []).append(named(verdict, reached))
        for (i, task, path, request, truth), verdict in zip(
                judged, _judging.judge_all(key, judged, notes, limits)):
            verdicts.setdefault(task.key, []).append(named(verdict, reached))
    finally:
        remove(folder)


def named(verdict, limit) -> tuple:
    """A failed verdict with the limit the notebook ran into named, if it is not yet."""
    passed, message = verdict
    if passed or not limit or limit.split(":")[0] in message:
        return verdict
    return passed, f"{message} [{limit}]"


def stopped_by(ran, limits, limit) -> str:
    """The name of the limit that stopped the sandbox, as the notebook's note ('' when
    none did)."""
    seen = ran.get("cgroup") or {}
    if ran.get("stopped") == "output":
        return (f"output limit: the sandbox sent back more than "
                f"{_sandbox.size_text(limits.output)}; it was stopped")
    if seen.get("memory"):
        return f"memory limit: the notebook used more than {_sandbox.size_text(limits.memory)}"
    if seen.get("processes"):
        return (f"process limit: the notebook tried to run more than {limits.processes} "
                "processes and threads at once")
    if ran.get("stopped") == "wall_clock":
        return f"wall-clock limit: the run was stopped after {limit:g} s"
    return ""
