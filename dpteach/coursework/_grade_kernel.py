"""The kernel side of grading: a notebook's kernel that survives its cells (restarted when
it dies, interrupted and settled when a cell times out), the injected collect cell, and
running a notebook's code cells within a time limit. Used by
:mod:`dpteach.coursework._grade_runner` inside the sandbox (:class:`Kernel`,
:func:`run_cells`, :data:`COLLECT`); :mod:`dpteach.coursework.grading` reads a notebook's
cells with :func:`code_cells`."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import nbformat
import numpy as np

_TIMEOUT_NAME = "GraderTimeout"
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stats() -> dict:
    """pid -> (parent pid, CPU seconds of the process and of its reaped children)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                text = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        try:
            ppid = int(fields[1])
            ticks = sum(int(x) for x in fields[11:15])   # utime stime cutime cstime
        except (IndexError, ValueError):
            continue
        out[int(entry)] = (ppid, ticks / _TICK)
    return out


def cpu_seconds(sandboxed=True) -> float:
    """The CPU seconds used so far by everything the grading runs: in the sandbox (a
    PID namespace of its own) every process there is; without it, this process and its
    descendants."""
    stats = _stats()
    if sandboxed:
        return sum(cpu for _, cpu in stats.values())
    children = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [os.getpid()]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += stats[pid][1]
        todo += children.get(pid, [])
    return total


class Budget:
    """CPU seconds for a phase of grading (the notebook's cells, or its tasks), and a
    wall-clock guard ``wall_factor`` times as long (plus 30 s) for sleeps and hangs: a
    verdict depends on the work done, not on how busy the machine is."""

    def __init__(self, cpu, wall_factor):
        self.cpu, self.wall = float(cpu), float(wall_factor) * float(cpu) + 30.0
        self.cpu_used = self.wall_used = 0.0

    def cpu_left(self) -> float:
        return self.cpu - self.cpu_used

    def wall_left(self) -> float:
        return self.wall - self.wall_used

    def spend(self, cpu, wall):
        self.cpu_used += cpu
        self.wall_used += wall


def _client_class():
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionComplete

    class _Client(NotebookClient):
        """Keeps no outputs (a notebook printing gigabytes cannot fill the grader's
        memory, and nothing printed is read); notes only the errors cells raise."""

        errors: list = []

        def process_message(self, msg, cell, cell_index):
            kind = msg.get("msg_type")
            content = msg.get("content") or {}
            if kind == "status" and content.get("execution_state") == "idle":
                raise CellExecutionComplete()
            if kind == "error":
                self.errors.append(f"{content.get('ename', '?')}: "
                                   f"{str(content.get('evalue', ''))[:200]}")
            return None

    return _Client


def _cancel_leftover_tasks():
    """Cancel what nbclient left pending on this thread's event loop (pollers of cells
    that timed out or whose kernel died), so it cannot wake up in a later kernel."""
    import asyncio

    from jupyter_core.utils import ensure_event_loop

    try:
        asyncio.get_running_loop()
        return                                             # not ours to clean
    except RuntimeError:
        pass
    loop = ensure_event_loop()
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in pending:
        t.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


class Kernel:
    """One notebook's kernel, in its own folder; restarted when it dies."""

    def __init__(self, folder: Path, prelude=None, sandboxed=True):
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        self._timeout_error, self._dead_error = CellTimeoutError, DeadKernelError
        self.folder = folder
        self.prelude = prelude
        self.sandboxed = sandboxed
        self.last_cpu = self.last_wall = 0.0
        self.last_reason = None
        self.nb = nbformat.v4.new_notebook()
        self.client = _client_class()(self.nb, kernel_name="python3", allow_errors=True,
                                      shutdown_kernel="immediate", record_timing=False,
                                      iopub_timeout=2, interrupt_on_timeout=True,
                                      error_on_timeout={"ename": _TIMEOUT_NAME,
                                                        "evalue": "", "traceback": []},
                                      resources={"metadata": {"path": str(folder)}})
        self.client.errors = []
        self.client.on_cell_executed = self._executed
        self._start()

    def _executed(self, cell=None, cell_index=None, execute_reply=None, **_):
        payload = ((execute_reply or {}).get("content") or {}).get("payload") or []
        self.asked_exit = any(isinstance(p, dict) and p.get("source") == "ask_exit"
                              for p in payload)
        # nbclient interrupted the kernel at the time limit and made up this reply
        self.timed_out = ((execute_reply or {}).get("content") or {}).get("ename") == _TIMEOUT_NAME

    def _start(self):
        self.starts = getattr(self, "starts", 0) + 1
        c = self.client
        c.km = c.create_kernel_manager()
        c.start_new_kernel(cwd=str(self.folder))
        c.start_new_kernel_client()
        if self.prelude:                  # before any of the notebook's code
            self.run(self.prelude, 60, 300)

    def _pid(self):
        try:
            return int(self.client.km.provisioner.process.pid)
        except Exception:                                   # noqa: BLE001
            return None

    def restart(self):
        self.stop()
        self._start()

    def stop(self):
        try:
            if self.client.km is not None:
                self.client._cleanup_kernel()
        except Exception:                                   # noqa: BLE001 - best effort
            self.client.km = self.client.kc = None
        _cancel_leftover_tasks()

    def alive(self) -> bool:
        try:
            from nbclient.util import run_sync

            return bool(self.client.km is not None and run_sync(self.client.km.is_alive)())
        except Exception:                                   # noqa: BLE001
            return False

    def run(self, source: str, cpu_limit: float, wall_limit: float = None) -> str:
        """Run ``source``: "ok", "error" (it raised), "died" (the kernel is gone) or
        "timeout": interrupted once it used ``cpu_limit`` CPU seconds (counted over
        every process of the grading, not the wall clock), or after ``wall_limit``
        wall-clock seconds (a sleep, a hang); killed and restarted if it does not stop.
        ``last_cpu``, ``last_wall`` and ``last_reason`` ("cpu", "wall") say what it
        used and why it stopped."""
        wall_limit = 5 * cpu_limit + 30 if wall_limit is None else wall_limit
        cell = nbformat.v4.new_code_cell(source)
        self.nb.cells.append(cell)
        self.client.timeout = max(1, int(np.ceil(wall_limit)))
        self.client.errors = []
        self.asked_exit = self.timed_out = False
        self.last_reason = None
        start_cpu, start_wall = cpu_seconds(self.sandboxed), time.monotonic()
        stop = threading.Event()
        watch = threading.Thread(target=self._watch, args=(start_cpu, cpu_limit, stop),
                                 daemon=True)
        watch.start()
        try:
            self.client.execute_cell(cell, len(self.nb.cells) - 1, store_history=False)
        except self._dead_error:
            return "timeout" if self.last_reason == "cpu" else "died"
        except self._timeout_error:        # no answer even to the interrupt: start afresh
            self.last_reason = self.last_reason or "wall"
            self.restart()
            return "timeout"
        except Exception:                                   # noqa: BLE001
            if self.last_reason == "cpu":
                return "timeout"
            return "died" if not self.alive() else "error"
        finally:
            stop.set()
            watch.join()
            self.last_cpu = max(0.0, cpu_seconds(self.sandboxed) - start_cpu)
            self.last_wall = time.monotonic() - start_wall
        if self.timed_out:
            self.last_reason = self.last_reason or "wall"
            self._settle()
            return "timeout"
        if self.last_reason == "cpu":
            self._settle()
            return "timeout"
        if self.asked_exit:               # exit() / quit(): the kernel stops shortly
            self._wait_until_dead(5.0)
            return "died"
        if not self.alive():
            return "died"
        return "error" if self.client.errors else "ok"

    def _watch(self, start, limit, stop):
        """Interrupt the kernel once the cell has used ``limit`` CPU seconds; kill it
        when it goes on 5 CPU seconds past the interrupt (it caught KeyboardInterrupt)."""
        interrupted = False
        while not stop.wait(0.1):
            used = cpu_seconds(self.sandboxed) - start
            if used <= limit:
                continue
            pid = self._pid()
            if pid is None:
                return
            self.last_reason = "cpu"
            try:
                if not interrupted:
                    os.kill(pid, signal.SIGINT)
                    interrupted, limit = True, used + 5.0
                else:
                    os.kill(pid, signal.SIGKILL)
                    return
            except OSError:
                return

    def _wait_until_dead(self, seconds):
        deadline = time.monotonic() + seconds
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _settle(self):
        """After an interrupted cell: if the kernel does not run a trivial cell within
        3 s (the cell caught KeyboardInterrupt and goes on), kill and restart it."""
        cell = nbformat.v4.new_code_cell("pass")
        self.nb.cells.append(cell)
        self.client.timeout = 3
        self.timed_out = False
        try:
            self.client.execute_cell(cell, len(self.nb.cells) - 1, store_history=False)
            if self.timed_out or not self.alive():
                self.restart()
        except Exception:                                   # noqa: BLE001
            self.restart()


COLLECT = '''\
def {fn}():
    import pickle
    from dpteach.coursework import assignments as A
    from dpteach.coursework.assignments import _transport as T
    names, out = {names!r}, None
    g = globals()
    missing = [n for n in names if n not in g]
    if missing:
        out = {{"missing": missing}}
    else:
        try:
            with open({request!r}, "rb") as f:
                request = pickle.load(f)
            task = [t for t in A.tasks({assignment!r}) if t.key == {key!r}][0]
            out = {{"data": task.collect({{n: g[n] for n in names}}, request)}}
        except BaseException as err:
            out = {{"error": (type(err).__name__ + ": " + str(err))[:300]}}
    try:
        text = T.dumps(out)
    except BaseException as err:
        text = T.dumps({{"error": "the result could not be sent as data: " + str(err)[:200]}})
    with open({result!r}, "w", encoding="utf-8") as f:
        f.write(text)
try:
    {fn}()
finally:
    del {fn}
'''


def code_cells(nb) -> list:
    """(index, source) of the notebook's non-empty code cells."""
    return [(i, str(cell.get("source", ""))) for i, cell in enumerate(nb.cells)
            if cell.get("cell_type") == "code" and str(cell.get("source", "")).strip()]


def run_cells(kernel, cells, budget, notes) -> None:
    """Run ``cells`` ((index, source) pairs) in ``kernel`` within ``budget`` (a
    :class:`Budget`: CPU seconds, and the wall-clock guard)."""
    for i, source in cells:
        if budget.cpu_left() <= 0 or budget.wall_left() <= 0:
            notes.append(f"timed out after {budget.cpu:g} CPU seconds: cells from {i} on "
                         "were not run")
            return
        status = kernel.run(source, budget.cpu_left(), budget.wall_left())
        budget.spend(kernel.last_cpu, kernel.last_wall)
        if status == "died":
            notes.append(f"cell {i} ended the kernel (exit(), quit(), os._exit, or a "
                         "limit?); it was restarted and later cells ran in a fresh kernel")
            kernel.restart()                   # the restart is not the cells' time
        elif status == "timeout":
            what = (f"{budget.cpu:g} CPU seconds" if kernel.last_reason == "cpu" else
                    f"{budget.wall:g} s of wall-clock time (a sleep or a hang)")
            notes.append(f"timed out after {what} in cell {i}: it was stopped and the "
                         "cells after it were not run")
            return
