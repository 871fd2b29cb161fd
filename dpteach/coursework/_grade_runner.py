"""The part of grading that runs the student's code: ``python -m
dpteach.coursework._grade_runner JOB WORK``, started by :mod:`dpteach.coursework.grading`
inside the sandbox (or, with ``--no-sandbox``, as a plain child process).

JOB (read-only in the sandbox) holds ``job.json`` (the cells, the assignment, the tasks'
names and request files, the prelude, the limits) and one ``request_<i>.pkl`` per task,
written by the grader; WORK is the only writable folder. The runner first binds itself:
as root in the sandbox it makes WORK and HOME, sets the resource limits, gives up its
capabilities and becomes the unprivileged identity the grader chose, before any of the
notebook's code runs. Then it starts a kernel in WORK, runs the prelude (the notebook's
checks turned off), the notebook's cells within a CPU-time budget, and per task the
collect cell, which writes ``result_<i>.json``.

What it learns it sends back on its standard output as frames (a line
``DPTEACH-FRAME {"kind": ..., "size": n}`` and n bytes): each task's result as it is
collected, and the status (notes, and per task "ok", "timeout", "died" or
"grading_timeout"). It never sees a task's truth and judges nothing: the grader treats
every byte it sends as untrusted data.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys
from pathlib import Path

FRAME = b"DPTEACH-FRAME "


class Channel:
    """The frames back to the grader, on a private copy of stdout (fd 1 itself then
    points at stderr, so stray output of a library in the kernel cannot end up in it)."""

    def __init__(self):
        self.out = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)

    def send(self, kind, payload: bytes, **fields):
        header = json.dumps({"kind": kind, "size": len(payload), **fields}).encode()
        try:
            self.out.write(FRAME + header + b"\n" + payload)
        except OSError:
            pass


def _read_capped(path, cap):
    """The bytes of a regular file ``path`` (no symlink, FIFO or device), at most
    ``cap``; None when it is not one, is larger, or is missing."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        import stat
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return b""
        data = f.read(cap + 1)
    return data if len(data) <= cap else b""


def _drop_privileges(uid, limits, work) -> None:
    """As root in the sandbox: WORK and HOME made, an /etc/passwd entry for the
    identity, the limits set, the capability bounding set emptied, then the identity
    taken (every capability goes with the change of user)."""
    for folder in (work, "/tmp/home"):
        os.makedirs(folder, exist_ok=True)
        os.chmod(folder, 0o700)
        os.chown(folder, uid, uid)
    try:
        Path("/etc/passwd").write_text(f"student:x:{uid}:{uid}:student:/tmp/home:/bin/sh\n")
        Path("/etc/group").write_text(f"student:x:{uid}:\n")
    except OSError:
        pass
    _set_limits(limits, processes=True)
    libc = ctypes.CDLL(None, use_errno=True)
    PR_CAPBSET_DROP = 24
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("could not drop privileges")


def _set_limits(limits, processes) -> None:
    """The per-process limits: the file size (the disk), core files off, the CPU-time
    backstop, open files; processes and address space where no control group binds
    them (``processes``: RLIMIT_NPROC counts the user's processes, so only with an
    identity of the sandbox's own)."""
    def cap(which, value):
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass
    cap(resource.RLIMIT_FSIZE, int(limits["disk"]))
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_NOFILE, 1024)
    if limits.get("cpu_backstop"):
        cap(resource.RLIMIT_CPU, int(limits["cpu_backstop"]))
    if processes:
        cap(resource.RLIMIT_NPROC, int(limits["processes"]))
    if not limits.get("cgroup"):
        cap(resource.RLIMIT_AS, int(limits["memory"]))


def _free_disk(folder) -> float:
    try:
        st = os.statvfs(folder)
        return st.f_bavail * st.f_frsize
    except OSError:
        return float("inf")


def run(job_dir, work) -> int:
    job_dir, work = Path(job_dir), Path(work)
    job = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
    limits = {**job["limits"], "cpu_backstop": job.get("cpu_backstop")}
    channel = Channel()
    if job.get("identity") is not None:
        _drop_privileges(int(job["identity"]), limits, str(work))
    else:
        work.mkdir(parents=True, exist_ok=True)
        _set_limits(limits, processes=False)
    os.chdir(work)

    from .._support.lazy import go_without_unneeded_modules
    go_without_unneeded_modules()             # a process of its own: about 1.5 s less
    from ._grade_kernel import COLLECT, Budget, Kernel, run_cells

    cells, timeout, task_timeout = job["cells"], job["timeout"], job["task_timeout"]
    wall_factor = float(limits.get("wall_factor", 5.0))
    status = {"notes": [], "tasks": {}, "done": False}
    notes = status["notes"]

    def send_status():
        channel.send("status", json.dumps(status).encode("utf-8"))

    send_status()
    kernel = Kernel(work, prelude=job.get("prelude") or None,
                    sandboxed=job.get("sandboxed", True))
    try:
        run_cells(kernel, cells, Budget(timeout, wall_factor), notes)
        send_status()
        budget, rerun = Budget(timeout, wall_factor), False
        for task in job["tasks"]:
            i = str(task["index"])
            cpu = min(task_timeout, budget.cpu_left())
            if cpu <= 0 or budget.wall_left() <= 0:
                status["tasks"][i] = "grading_timeout"
                continue
            starts = kernel.starts
            result = work / task["result"]
            code = COLLECT.format(
                fn=f"_grader_collect_{task['token']}", names=tuple(task["names"]),
                request=str(job_dir / task["request"]), result=str(result),
                assignment=job["assignment"], key=task["key"])
            state = kernel.run(code, cpu, min(budget.wall_left(), wall_factor * cpu + 30))
            budget.spend(kernel.last_cpu, kernel.last_wall)
            status["tasks"][i] = state if state in ("timeout", "died") else "ok"
            if state == "timeout" and kernel.last_reason == "wall":
                status["tasks"][i] = "wall_timeout"
            data = _read_capped(result, int(job["max_result_bytes"]))
            if data is not None:
                channel.send("result", data, index=int(i))
                try:
                    os.unlink(result)
                except OSError:
                    pass
            send_status()
            if kernel.starts == starts and kernel.alive():
                continue
            if kernel.starts == starts:
                kernel.restart()
            if not rerun:
                notes.append(f"{task['key']}: the kernel had to be restarted while grading; "
                             "the notebook was run again for the remaining tasks")
                run_cells(kernel, cells, Budget(timeout, wall_factor), notes)
                rerun = True
        if _free_disk(work) < 1024 * 1024:
            notes.append("disk: the sandbox's scratch space was full")
        status["done"] = True
        send_status()
    finally:
        kernel.stop()
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2]))
