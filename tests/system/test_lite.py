"""The course in the browser: the JupyterLite site that `make lite` builds (_build/lite/),
served on 127.0.0.1 and opened in Debian's Chromium, runs notebooks 00, 06, 13 and 20 top
to bottom with no traceback, and a slider of one panel of each, moved by the mouse and
then by the keyboard, changes the picture. Every request to a host other than 127.0.0.1
is aborted and counted: the site must need none (no CDN, no package index).

One browser, one page, one site; the notebooks run one after the other. Two more
notebooks run in the site's own Pyodide under Node.js, without a browser
(tests/system/pyodide_run.mjs). Nothing here asserts speed: benchmarks/bench_lite.py
times the site.

Skipped, with a message, when the site or Chromium is missing -- except under CI=true,
where `make test` builds the site and installs Chromium first, and a missing one fails.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import pathlib
import shutil
import threading
import time
import urllib.parse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "lite"
ARTIFACTS = ROOT / "test-artifacts" / "lite"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
NOTEBOOKS = ("00_start_here", "06_laplace_mechanism", "13_epsilon_as_a_test", "20_synthetic_data")
#: run top to bottom too, in the site's Pyodide under Node.js (no browser, no widgets'
#: front end): the wings whose index arrays once broke under Pyodide, where np.intp is
#: 32 bits (np.bincount refused int64 class numbers)
MORE_NOTEBOOKS = ("01_anonymization_and_its_limits", "17_local_model")
RUNNER = ROOT / "tests" / "system" / "pyodide_run.mjs"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _missing(what):
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {what}: `make test` should have made it")
    pytest.skip(f"{what}: run `make lite LITE_PYODIDE=registries` (or `make test`)")


# ------------------------------------------------------------------ the site, served
class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".mjs": "text/javascript",
                      ".js": "text/javascript", ".json": "application/json"}

    def log_message(self, *args):
        pass


class Site:
    """The built site on 127.0.0.1 (a static server in a thread)."""

    def __init__(self, folder=SITE):
        handler = functools.partial(_Handler, directory=str(folder))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, notebook):
        return f"{self.origin}/lab/index.html?path={urllib.parse.quote(notebook)}.ipynb"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Browser:
    """Chromium with every request to another host aborted and recorded."""

    def __init__(self, playwright, site, *, user_data_dir=None):
        self.site, self.foreign = site, []
        chromium = shutil.which("chromium") or "/usr/bin/chromium"
        self.context = None
        if user_data_dir is None:
            self.browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                                      args=CHROMIUM_ARGS)
        else:      # a profile kept on disk: the benchmark's warm visit reuses its cache
            self.browser = None
            self.context = playwright.chromium.launch_persistent_context(
                str(user_data_dir), executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000})
            self._watch(self.context)

    def _watch(self, context):
        context.route("**/*", self._route)
        context.on("dialog", lambda dialog: dialog.accept())

    def new_page(self):
        """A page in a context of its own (nothing stored from the notebook before:
        JupyterLab would reopen it), or the persistent profile's page."""
        if self.browser is None:
            return self.context.pages[0] if self.context.pages else self.context.new_page()
        if self.context is not None:
            self.context.close()
        self.context = self.browser.new_context(viewport={"width": 1400, "height": 1000})
        self._watch(self.context)
        return self.context.new_page()

    def _route(self, route):
        if route.request.url.startswith(self.site.origin + "/"):
            route.continue_()
        else:
            self.foreign.append(route.request.url)
            route.abort()

    def close(self):
        if self.context is not None:
            self.context.close()
        if self.browser is not None:
            self.browser.close()


# ------------------------------------------------------------------ driving JupyterLab
def open_notebook(page, site, notebook, *, timeout=300_000):
    """Open a notebook of the site and wait until its kernel is idle."""
    page.goto(site.url(notebook))
    page.wait_for_selector(".jp-Notebook", timeout=timeout)
    page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=timeout)


def run_all(page):
    # make the notebook the current widget by its tab: a click in the notebook itself
    # lands on whatever is at its centre, a link to the next notebook included
    page.click("#jp-main-dock-panel .lm-TabBar-tab.jp-mod-current", timeout=20_000)
    page.click(".lm-MenuBar-itemLabel:text-is('Run')", timeout=20_000)
    page.click("li.lm-Menu-item[data-command='runmenu:run-all']", timeout=20_000)


_ALL_RAN = """(n) => {
  const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent);
  return !prompts.some(p => p.includes('*')) && prompts.some(p => p.includes('[' + n + ']'));
}"""

_STDERR = """() => [...document.querySelectorAll(
  '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')].map(e => e.innerText)"""


def wait_until_run(page, notebook, *, timeout=600_000):
    """Wait until every code cell ran (the last one numbered n in a fresh kernel)."""
    n = code_cells(notebook)
    page.wait_for_function(_ALL_RAN, arg=n, timeout=timeout, polling=500)


def code_cells(notebook):
    nb = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())
    return sum(1 for c in nb["cells"] if c["cell_type"] == "code")


def first_panel(page):
    """The output area of the first panel (a picture and a slider)."""
    panel = page.locator(".jp-OutputArea-output:has(.widget-image):has(.noUi-handle)").first
    panel.scroll_into_view_if_needed(timeout=60_000)
    page.wait_for_timeout(300)
    return panel


def _src(panel):
    return panel.locator(".widget-image").first.get_attribute("src")


def wait_for_redraw(page, panel, old_src, *, timeout=120_000):
    """Wait until the panel's picture is a new one (each redraw sends a new image)."""
    image = panel.locator(".widget-image").first
    image.element_handle().wait_for_element_state("visible", timeout=timeout)
    page.wait_for_function("([el, old]) => el.getAttribute('src') !== old",
                           arg=[image.element_handle(), old_src], timeout=timeout, polling=50)


def move_by_mouse(page, panel, fraction=0.8):
    """Click the first slider's track at `fraction` of its width."""
    track = panel.locator(".noUi-target").first
    box = track.bounding_box()
    page.mouse.click(box["x"] + fraction * box["width"], box["y"] + box["height"] / 2)


def move_by_keyboard(page, panel, key="ArrowRight", presses=3):
    handle = panel.locator(".noUi-handle").first
    handle.focus()
    for _ in range(presses):
        page.keyboard.press(key)
    return handle


def slider_value(panel):
    return panel.locator(".noUi-handle").first.get_attribute("aria-valuenow")


# ------------------------------------------------------------------ the test
@pytest.fixture(scope="module")
def site():
    if not (SITE / "jupyter-lite.json").exists():
        _missing(f"no JupyterLite site in {SITE.relative_to(ROOT)}")
    if not (shutil.which("chromium") or os.path.exists("/usr/bin/chromium")):
        _missing("no Chromium found")
    served = Site()
    yield served
    served.close()


def test_the_site_runs_the_course_in_the_browser_with_no_other_host(site):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report, problems = {}, []
    with sync_playwright() as p:
        browser = Browser(p, site)
        try:
            for notebook in NOTEBOOKS:
                started = time.perf_counter()
                page = browser.new_page()
                open_notebook(page, site, notebook)
                run_all(page)
                wait_until_run(page, notebook)
                stderr = page.evaluate(_STDERR)
                tracebacks = [s for s in stderr if "Traceback" in s or "Error:" in s]
                if tracebacks:
                    problems.append(f"{notebook}: {tracebacks[0][:500]}")
                panel = first_panel(page)
                before_png, src = panel.screenshot(), _src(panel)
                value = slider_value(panel)
                move_by_mouse(page, panel)
                wait_for_redraw(page, panel, src)
                page.wait_for_timeout(500)
                mouse_png, src, mouse_value = panel.screenshot(), _src(panel), slider_value(panel)
                for _ in range(2):      # a press, then the picture, as a person would
                    move_by_keyboard(page, panel, "ArrowLeft", presses=1)
                    wait_for_redraw(page, panel, src)
                    page.wait_for_timeout(300)
                    src = _src(panel)
                key_png, key_value = panel.screenshot(), slider_value(panel)
                focused = page.evaluate("() => document.activeElement.className")
                for name, png in (("before", before_png), ("mouse", mouse_png), ("keys", key_png)):
                    (ARTIFACTS / f"{notebook}_{name}.png").write_bytes(png)
                report[notebook] = {"seconds": round(time.perf_counter() - started, 1),
                                    "stderr": stderr, "slider": [value, mouse_value, key_value],
                                    "focus_after_keys": focused}
                if mouse_value == value or mouse_png == before_png:
                    problems.append(f"{notebook}: a click on the slider did not move it "
                                    f"({value} -> {mouse_value}) or change the picture")
                if key_value == mouse_value or key_png == mouse_png:
                    problems.append(f"{notebook}: ArrowLeft on the focused handle did not move "
                                    f"it ({mouse_value} -> {key_value}) or change the picture")
                if "noUi-handle" not in focused:
                    problems.append(f"{notebook}: the arrow keys took the focus from the "
                                    f"slider handle to {focused!r}")
        finally:
            foreign = list(browser.foreign)
            browser.close()
    report["foreign_requests"] = foreign
    (ARTIFACTS / "report.json").write_text(json.dumps(report, indent=1))
    assert not foreign, f"{len(foreign)} requests to other hosts, e.g. {foreign[:5]}"
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ Pyodide without a browser
def run_in_pyodide(folder, names):
    """The report of tests/system/pyodide_run.mjs for notebooks ``names`` of ``folder``."""
    import subprocess

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        _missing("no Node.js found")
    out = subprocess.run([node, str(RUNNER), str(SITE / "static" / "pyodide"), str(folder),
                          *names], capture_output=True, text=True, timeout=900)
    lines = [line for line in out.stdout.splitlines() if line.startswith("REPORT ")]
    assert out.returncode == 0 and lines, (out.stdout[-2000:] + out.stderr[-2000:])
    return json.loads(lines[-1][len("REPORT "):])


def test_the_index_wings_run_top_to_bottom_in_the_sites_32_bit_pyodide(site, tmp_path):
    # a notebook whose second cell makes the mistake these wings once made: the runner
    # must see the error, so a clean run of the course notebooks means something
    twin = {"cells": [{"cell_type": "code", "source": "import numpy as np", "metadata": {},
                       "outputs": [], "execution_count": None},
                      {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                       "source": "np.bincount(np.array([0, 2, 2], dtype=np.int64))"}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    for name in MORE_NOTEBOOKS:
        shutil.copy(ROOT / "notebooks" / f"{name}.ipynb", tmp_path / f"{name}.ipynb")
    (tmp_path / "int64_twin.ipynb").write_text(json.dumps(twin))
    report = run_in_pyodide(tmp_path, [f"{n}.ipynb" for n in MORE_NOTEBOOKS] + ["int64_twin.ipynb"])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "pyodide_node.json").write_text(json.dumps(report, indent=1))
    assert report["intp_bits"] == 32 and "emscripten" in report["platform"].lower(), report
    for name in MORE_NOTEBOOKS:
        got = report["notebooks"][f"{name}.ipynb"]
        assert got["error"] is None and got["ran"] == got["cells"] == code_cells(name), (name, got)
    twin_run = report["notebooks"]["int64_twin.ipynb"]
    assert twin_run["ran"] == 2 and "int64" in (twin_run["error"] or ""), twin_run


# ------------------------------------------------------------------ the build's checks
def _build_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("lite_build", ROOT / "lite" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def official_lock():
    build = _build_module()
    cache = pathlib.Path(os.environ.get("DPTEACH_LITE_CACHE",
                                        pathlib.Path.home() / ".cache" / "dpteach-lite"))
    lock = cache / f"pyodide-{build.PYODIDE_VERSION}" / build.LOCK
    if not lock.exists():
        _missing(f"no checked Pyodide in {lock.parent}")
    return build, lock


def test_the_build_refuses_a_package_file_that_is_not_the_official_one(official_lock, tmp_path):
    build, lock = official_lock
    source = tmp_path / "pyodide"
    source.mkdir()
    shutil.copy(lock, source / build.LOCK)
    packages = json.loads(lock.read_text())["packages"]
    first = sorted(packages[k]["file_name"] for k in build.needed_packages({"packages": packages}))[0]
    (source / first).write_bytes(b"not the wheel the lock names")
    with pytest.raises(build.Refused, match="refused"):
        build.assemble_pyodide(str(source), tmp_path / "cache")
    assert not (tmp_path / "cache" / f"pyodide-{build.PYODIDE_VERSION}").exists()


def test_the_build_refuses_a_lock_that_is_not_the_pinned_one(official_lock, tmp_path):
    build, lock = official_lock
    source = tmp_path / "pyodide"
    source.mkdir()
    data = json.loads(lock.read_text())
    data["packages"]["numpy"]["sha256"] = "0" * 64
    (source / build.LOCK).write_text(json.dumps(data))
    with pytest.raises(build.Refused, match="not the official one"):
        build.assemble_pyodide(str(source), tmp_path / "cache")


def test_the_site_carries_no_solution_and_loads_the_kit_from_its_own_lock():
    if not (SITE / "jupyter-lite.json").exists():
        _missing(f"no JupyterLite site in {SITE.relative_to(ROOT)}")
    files = {p.relative_to(SITE / "files").as_posix() for p in (SITE / "files").rglob("*.ipynb")}
    course = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}
    exercises = {f"exercises/{p.name}" for p in (ROOT / "notebooks" / "exercises").glob("*.ipynb")}
    assert files == course | exercises
    lock = json.loads((SITE / "static" / "pyodide" / "pyodide-lock.json").read_text())["packages"]
    assert {"dpteach", "ipywidgets", "comm", "tqdm", "scipy", "pandas"} <= set(lock)
    assert {"numpy", "scipy", "matplotlib", "pandas", "ipywidgets", "tqdm"} <= set(lock["dpteach"]["depends"])
    for entry in lock.values():
        assert (SITE / "static" / "pyodide" / entry["file_name"]).is_file(), entry["file_name"]
