"""A real browser: JupyterLab serves notebook 06, Chromium (through Playwright) runs all
cells, a slider is moved with the keyboard, and the picture must change.

Skipped, with a message, when no Chromium is installed -- except under CI=true, where
`make test` installs Debian's chromium and a missing browser is a failure.
"""

import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]

pytestmark = pytest.mark.browser


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


@pytest.fixture(scope="module")
def chromium():
    path = find_chromium()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but no Chromium found: `make test` should have installed it")
        pytest.skip("no Chromium found: install Debian's chromium (or run `CI=true make test` as root) "
                    "to run the browser test")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_http(url, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except Exception:
            time.sleep(0.5)
    raise TimeoutError(f"nothing answered at {url} within {timeout} s")


def start_server(argv, cwd, env, log):
    """Start a server in its own process group so it and its kernels can be stopped."""
    return subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop_server(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def isolated_jupyter_env(tmp_path):
    """Config, data and runtime dirs of our own; no news or update pop-ups."""
    config = tmp_path / "config"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), MPLBACKEND="Agg")
    return env


def move_slider_and_compare(page, tag):
    """Focus the first slider handle, press ArrowRight, return (before, after) PNGs."""
    image = page.locator(".widget-image").first
    image.scroll_into_view_if_needed()
    before = image.screenshot()
    handle = page.locator(".widget-slider .noUi-handle, .widget-hslider .noUi-handle").first
    handle.focus()
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    page.wait_for_timeout(1500)
    after = image.screenshot()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"{tag}_before.png").write_bytes(before)
    (ARTIFACTS / f"{tag}_after.png").write_bytes(after)
    return before, after


def launch(playwright, chromium):
    return playwright.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)


def test_jupyterlab_runs_notebook_06_and_a_slider_redraws(chromium, tmp_path):
    from playwright.sync_api import sync_playwright

    work = tmp_path / "notebooks"
    work.mkdir()
    shutil.copy(ROOT / "notebooks" / "06_laplace_mechanism.ipynb", work)
    port, token = free_port(), "dpteach-browser-test"
    env = isolated_jupyter_env(tmp_path)
    argv = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
            f"--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
            f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    with open(tmp_path / "lab.log", "w") as log:
        server = start_server(argv, work, env, log)
        try:
            wait_for_http(f"http://127.0.0.1:{port}/api/status?token={token}")
            with sync_playwright() as p:
                browser = launch(p, chromium)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"http://127.0.0.1:{port}/lab/tree/06_laplace_mechanism.ipynb?token={token}")
                # wait for the kernel to be idle, or a "Select Kernel" dialog would appear
                page.wait_for_selector(".jp-Notebook", timeout=90_000)
                page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=90_000)
                page.click(".jp-Notebook")
                page.click(".lm-MenuBar-itemLabel:text-is('Run')", timeout=10_000)
                page.click("li.lm-Menu-item[data-command='runmenu:run-all']", timeout=10_000)
                page.wait_for_selector(".widget-image", timeout=120_000)
                page.wait_for_function(
                    "() => document.querySelectorAll('.widget-image').length >= 4", timeout=120_000)
                page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                       timeout=120_000)
                page.wait_for_timeout(1000)
                before, after = move_slider_and_compare(page, "jupyterlab")
                browser.close()
        finally:
            stop_server(server)
    assert server.poll() is not None, "the JupyterLab server is still running"
    assert before != after, "moving the slider did not change the picture"


def test_voila_dashboard_slider_redraws(chromium, tmp_path):
    """`make demo NB=06` serves this: Voilà renders notebook 06 with code hidden; moving a
    slider in the dashboard changes the picture."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    notebook = ROOT / "notebooks" / "06_laplace_mechanism.ipynb"
    argv = [sys.executable, "-m", "voila", str(notebook), "--no-browser", "--Voila.ip=127.0.0.1",
            f"--port={port}"]
    with open(tmp_path / "voila.log", "w") as log:
        server = start_server(argv, ROOT / "notebooks", isolated_jupyter_env(tmp_path), log)
        try:
            wait_for_http(f"http://127.0.0.1:{port}/")
            with sync_playwright() as p:
                browser = launch(p, chromium)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"http://127.0.0.1:{port}/", timeout=180_000)
                page.wait_for_function(
                    "() => document.querySelectorAll('.widget-image').length >= 4", timeout=180_000)
                page.wait_for_timeout(1500)
                assert page.locator("text=import dpteach as dp").count() == 0, "code should be hidden"
                before, after = move_slider_and_compare(page, "voila")
                browser.close()
        finally:
            stop_server(server)
    assert server.poll() is not None
    assert before != after, "moving the slider in Voilà did not change the picture"
