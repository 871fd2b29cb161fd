"""`make lab` starts JupyterLab quietly: its recipe, run as the Makefile writes it (with a
free port and a folder of our own), prints no warning and no language-server scan before
the server says where it runs."""

import os
import pathlib
import re
import subprocess
import sys
import time

from test_browser import free_port, isolated_jupyter_env

ROOT = pathlib.Path(__file__).resolve().parents[2]


def lab_recipe() -> str:
    """The shell command of the Makefile's lab target, joined across its continued lines."""
    text = (ROOT / "Makefile").read_text()
    body = text[text.index("\nlab: ") + 1:].split("\n\n")[0].split("\n")[1:]
    return " ".join(line.strip().rstrip("\\").strip() for line in body)


def test_make_lab_starts_without_warnings_or_a_language_server_scan(tmp_path):
    port = free_port()
    command = (lab_recipe().replace("$(VENV)/bin/jupyter", f"{sys.executable} -m jupyter")
               .replace("$(PORT)", str(port))
               .replace("$(ALLOW_ROOT)", "--allow-root" if os.getuid() == 0 else "")
               .replace("--ServerApp.root_dir=notebooks", f"--ServerApp.root_dir={tmp_path}"))
    assert "$(" not in command, command
    command += (f" --no-browser --LabApp.workspaces_dir={tmp_path / 'workspaces'}"
                " --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate")
    env = isolated_jupyter_env(tmp_path)
    env.pop("PYTHONWARNINGS", None)
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        server = subprocess.Popen(command, shell=True, cwd=ROOT, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 240
            while "is running at" not in log.read_text() and time.monotonic() < deadline:
                assert server.poll() is None, log.read_text()[-3000:]
                time.sleep(0.5)
            time.sleep(3)                        # what a server prints just after it starts
        finally:
            os.killpg(server.pid, 15)
            server.wait(30)
    text = log.read_text()
    assert "is running at" in text, text[-3000:]
    assert not re.search(r"Warning\b", text), text[-3000:]
    assert "Skipped non-installed server" not in text, text[-3000:]
