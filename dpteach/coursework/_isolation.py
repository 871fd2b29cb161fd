"""What keeps one sandbox apart from the others on a machine: a user id of its own
(root only), held by a file lock so that graders side by side never share one, and a
control group with its memory and process limits, which every process of the sandbox
joins from birth. :mod:`._sandbox` launches the sandbox inside both."""

from __future__ import annotations

import os
import re
import signal
import tempfile
import threading
import time
from pathlib import Path

#: the first user id the sandboxes run as (when the grader is root): one per sandbox
#: running at once; no host account needs to exist for them
UID_BASE = int(os.environ.get("DPTEACH_GRADE_UID_BASE", "2000000000"))


# ------------------------------------------------------------------ identities
class Identities:
    """User ids for the sandboxes running at once (root only), each sandbox its own, so
    that one sandbox's processes never count against another's limit. An id is held by
    an exclusive lock on a file of its own (``fcntl.flock``), so that graders running
    side by side on one machine (test workers, shards) never share one; the lock goes
    with the process that held it, so an id a dead grader left is free again, and its
    leftover processes are killed before it is reused."""

    FOLDER = Path(tempfile.gettempdir()) / "dpteach-grade-identities"

    def __init__(self):
        self._lock = threading.Lock()
        self._held = {}

    def take(self) -> int:
        import fcntl
        with self._lock:
            self.FOLDER.mkdir(mode=0o700, exist_ok=True)
            for k in range(100_000):
                uid = UID_BASE + k
                if uid in self._held:
                    continue
                f = open(self.FOLDER / f"{uid}.lock", "a")
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    f.close()
                    continue
                self._held[uid] = f
                return uid
        raise RuntimeError("no free user id for a sandbox")

    def give(self, uid):
        with self._lock:
            f = self._held.pop(uid, None)
        if f is not None:
            f.close()


IDENTITIES = Identities()


def kill_uid(uid) -> None:
    """Kill every process of the host running as ``uid`` (left by a sandbox)."""
    for _ in range(5):
        found = False
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                if proc.stat().st_uid == uid:
                    os.kill(int(proc.name), signal.SIGKILL)
                    found = True
            except OSError:
                continue
        if not found:
            return
        time.sleep(0.05)


# ------------------------------------------------------------------ control groups
class ControlGroup:
    """A control group for one sandbox, where the machine lets the grader make one: its
    memory and process limits, the files a process writes its pid to in order to join,
    and what it saw (:meth:`report`). ``ControlGroup.make(...)`` returns None where there
    is none to make."""

    ROOT_V1 = Path("/sys/fs/cgroup")
    PARENT = "dpteach-grade"

    def __init__(self, folders, version):
        self.folders, self.version = folders, version

    @classmethod
    def make(cls, name, limits):
        try:
            if (cls.ROOT_V1 / "cgroup.controllers").exists():
                return cls._make_v2(name, limits)
            return cls._make_v1(name, limits)
        except OSError:
            return None

    @classmethod
    def _make_v1(cls, name, limits):
        made = {}
        for ctl in ("memory", "pids", "cpuacct"):
            base = cls.ROOT_V1 / ctl
            if not (base / "cgroup.procs").exists():
                continue
            folder = base / cls.PARENT / name
            folder.mkdir(parents=True, exist_ok=True)
            made[ctl] = folder
        if not made:
            for folder in made.values():
                _rmdir(folder)
            return None
        if "memory" in made:
            (made["memory"] / "memory.limit_in_bytes").write_text(str(int(limits.memory)))
        swap = made.get("memory", Path("/nonexistent")) / "memory.memsw.limit_in_bytes"
        if swap.exists():
            try:
                swap.write_text(str(int(limits.memory)))
            except OSError:
                pass
        if "pids" in made:
            (made["pids"] / "pids.max").write_text(str(int(limits.processes)))
        return cls(made, 1)

    @classmethod
    def _make_v2(cls, name, limits):
        parent = cls.ROOT_V1 / cls.PARENT
        parent.mkdir(exist_ok=True)
        try:
            (cls.ROOT_V1 / "cgroup.subtree_control").write_text("+memory +pids")
            (parent / "cgroup.subtree_control").write_text("+memory +pids")
        except OSError:
            pass
        folder = parent / name
        folder.mkdir(exist_ok=True)
        (folder / "memory.max").write_text(str(int(limits.memory)))
        swap = folder / "memory.swap.max"
        if swap.exists():
            swap.write_text("0")
        (folder / "pids.max").write_text(str(int(limits.processes)))
        return cls({"memory": folder, "pids": folder, "cpuacct": folder}, 2)

    def procs_files(self) -> list:
        return sorted({str(f / "cgroup.procs") for f in self.folders.values()})

    def report(self) -> dict:
        """What the group saw: ``memory`` (the limit was hit), ``processes`` (a fork
        was refused), ``cpu_seconds``."""
        out = {"memory": False, "processes": False, "cpu_seconds": None}
        try:
            if self.version == 1:
                none = Path("/nonexistent")
                mem, pids = self.folders.get("memory", none), self.folders.get("pids", none)
                oom = _read(mem / "memory.oom_control")
                kills = re.search(r"oom_kill (\d+)", oom)
                out["memory"] = (kills is not None and int(kills.group(1)) > 0) or \
                    int(_read(mem / "memory.failcnt") or 0) > 0
                events = re.search(r"max (\d+)", _read(pids / "pids.events"))
                out["processes"] = events is not None and int(events.group(1)) > 0
                cpu = _read(self.folders.get("cpuacct", mem) / "cpuacct.usage")
                out["cpu_seconds"] = int(cpu) / 1e9 if cpu.strip().isdigit() else None
            else:
                folder = self.folders["memory"]
                events = _read(folder / "memory.events")
                m = re.search(r"oom_kill (\d+)", events)
                mx = re.search(r"^max (\d+)", events, re.MULTILINE)
                out["memory"] = bool((m and int(m.group(1))) or (mx and int(mx.group(1))))
                p = re.search(r"max (\d+)", _read(folder / "pids.events"))
                out["processes"] = bool(p and int(p.group(1)))
                u = re.search(r"usage_usec (\d+)", _read(folder / "cpu.stat"))
                out["cpu_seconds"] = int(u.group(1)) / 1e6 if u else None
        except (OSError, ValueError):
            pass
        return out

    def kill_all(self) -> None:
        for _ in range(20):
            pids = set()
            for f in self.procs_files():
                pids |= {int(x) for x in _read(Path(f)).split() if x.isdigit()}
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.05)

    def remove(self) -> None:
        self.kill_all()
        for folder in set(self.folders.values()):
            _rmdir(folder)


def _read(path) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _rmdir(folder) -> None:
    for _ in range(40):
        try:
            os.rmdir(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)


def join_script(files) -> list:
    """A shell that writes its own pid into each control group's ``cgroup.procs`` and
    then becomes the sandbox (every process it starts is in the groups from birth)."""
    script = "".join(f'echo $$ > "${i + 1}" || exit 97; ' for i in range(len(files)))
    script += f"shift {len(files)}; exec \"$@\""
    return ["/bin/sh", "-c", script, "sh", *files]
