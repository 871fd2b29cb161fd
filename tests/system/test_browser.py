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

ROOT = pathlib.Path(__file__).resolve().parents[2]
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
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
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
                page.click("#jp-main-dock-panel .lm-TabBar-tab.jp-mod-current")   # not a link in it
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


# ---------------------------------------------------------------- every panel, screenshotted
PANELS_DIR = ARTIFACTS / "panels"
WINDOW = {"width": 1280, "height": 800}
MIN_CONTROL_PX = 100

#: measures, in the page, one panel's output area: its box and every control's own part
#: (the slider track, the dropdown's select box; a checkbox with its clickable label)
_MEASURE = """(el) => {
  const box = el.getBoundingClientRect();
  const parts = [];
  for (const w of el.querySelectorAll('.widget-slider, .widget-hslider, .widget-dropdown, .widget-checkbox, .widget-text')) {
    const label = w.querySelector('.widget-label');
    const part = w.classList.contains('widget-checkbox') ? w
               : (w.querySelector('.noUi-target, .slider-container, select, input') || w);
    const r = part.getBoundingClientRect();
    parts.push({label: label ? label.textContent.trim() : '', width: r.width});
  }
  const image = el.querySelector('.widget-image');
  const ir = image ? image.getBoundingClientRect() : null;
  return {width: box.width, height: box.height, scrollWidth: el.scrollWidth,
          left: box.left, right: box.right, parts: parts,
          image: ir ? {width: ir.width, natural: image.naturalWidth} : null};
}"""


def _all_panels_notebook(path, names):
    import nbformat

    cells = [nbformat.v4.new_code_cell("import dpteach as dp")]
    for name in names:
        cells.append(nbformat.v4.new_markdown_cell(f"### panel `{name}`"))
        cells.append(nbformat.v4.new_code_cell(f"dp.panels.{name}()"))
    metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                               "language": "python"}}      # else JupyterLab asks for a kernel
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata=metadata), path)


def test_every_panel_fits_a_1280x800_window_in_jupyterlab(chromium, tmp_path):
    """One generated notebook builds every panel in REGISTRY; JupyterLab runs it in
    Chromium at 1280 x 800. Each panel is scrolled into view and screenshotted into
    test-artifacts/panels/ (kept for CI); each must fit the notebook's width (nothing cut
    off or scrolled sideways) and the window's height, and no control may be narrower
    than 100 px (a slider track squeezed by its label cannot be used)."""
    from playwright.sync_api import sync_playwright

    from dpteach import panels

    names = sorted(panels.REGISTRY)
    work = tmp_path / "notebooks"
    work.mkdir()
    _all_panels_notebook(work / "all_panels.ipynb", names)
    PANELS_DIR.mkdir(parents=True, exist_ok=True)
    for old in PANELS_DIR.glob("*.png"):
        old.unlink()
    port, token = free_port(), "dpteach-panels-test"
    env = isolated_jupyter_env(tmp_path)
    argv = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
            f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    problems, measured = [], {}
    with open(tmp_path / "lab.log", "w") as log:
        server = start_server(argv, work, env, log)
        try:
            wait_for_http(f"http://127.0.0.1:{port}/api/status?token={token}")
            with sync_playwright() as p:
                browser = launch(p, chromium)
                page = browser.new_page(viewport=WINDOW)
                page.goto(f"http://127.0.0.1:{port}/lab/tree/all_panels.ipynb?token={token}")
                page.wait_for_selector(".jp-Notebook", timeout=90_000)
                page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=90_000)
                page.click("#jp-main-dock-panel .lm-TabBar-tab.jp-mod-current")   # not a link in it
                page.click(".lm-MenuBar-itemLabel:text-is('Run')", timeout=10_000)
                page.click("li.lm-Menu-item[data-command='runmenu:run-all']", timeout=10_000)
                page.wait_for_function(
                    f"() => document.querySelectorAll('.jp-OutputArea-output .widget-image').length >= {len(names)}",
                    timeout=240_000)
                page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                       timeout=120_000)
                page.wait_for_timeout(1000)
                notebook = page.locator(".jp-WindowedPanel-outer, .jp-Notebook").first
                nb_box = notebook.bounding_box()
                code_cells = page.locator(".jp-CodeCell")
                for i, name in enumerate(names):
                    cell = code_cells.nth(i + 1)
                    output = cell.locator(".jp-OutputArea-output").first
                    output.scroll_into_view_if_needed()
                    page.wait_for_timeout(150)
                    m = output.evaluate(_MEASURE)
                    measured[name] = m
                    output.screenshot(path=str(PANELS_DIR / f"{name}.png"))
                    if m["scrollWidth"] > m["width"] + 1 or m["right"] > nb_box["x"] + nb_box["width"] + 1:
                        problems.append(f"{name}: {m['scrollWidth']:.0f} px wide in an output "
                                        f"area of {m['width']:.0f} px")
                    if m["height"] > WINDOW["height"]:
                        problems.append(f"{name}: {m['height']:.0f} px tall, the window is "
                                        f"{WINDOW['height']} px")
                    if m["image"] and m["image"]["width"] + 1 < min(m["image"]["natural"], m["width"]):
                        problems.append(f"{name}: the picture is shrunk to {m['image']['width']:.0f} px "
                                        f"of {m['image']['natural']} px")
                    for part in m["parts"]:
                        if part["width"] < MIN_CONTROL_PX:
                            problems.append(f"{name}: control {part['label']!r} is "
                                            f"{part['width']:.0f} px wide (< {MIN_CONTROL_PX})")
                browser.close()
        finally:
            stop_server(server)
    (PANELS_DIR / "measures.json").write_text(json.dumps(measured, indent=1))
    assert len(list(PANELS_DIR.glob("*.png"))) == len(names)
    assert not problems, "panels that do not fit 1280 x 800:\n" + "\n".join(problems)
