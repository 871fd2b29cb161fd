"""The course website: Sphinx builds it from the committed notebooks (never executing them)
and the package's docstrings, and a real Chromium reads two of its pages offline.

The build is the one `make docs` makes (`docs/_build/html`): if `make docs` ran before, this
is an incremental rebuild that only re-reads what changed. Then, in Chromium through
Playwright, served from 127.0.0.1 with every other address refused:
- a course notebook page shows its pictures (each `<img>` decoded, naturalWidth > 0) and its
  formulas typeset by the MathJax copy the site ships (an `mjx-container` in every maths
  element, no TeX error);
- the API page of `dpteach.mechanisms` shows `dpteach.laplace_mechanism` with its signature
  and docstring.
The static checks beside them: every notebook and exercise has a page, no solution has one,
and every name in `dpteach.__all__` is documented under `dpteach.NAME`.

Skipped, with a message, when Chromium or the docs tools are missing -- except under CI=true,
where a missing one is a failure.
"""

import functools
import http.server
import os
import pathlib
import re
import subprocess
import sys
import threading

import pytest

from test_browser import CHROMIUM_ARGS, find_chromium

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SITE = DOCS / "_build" / "html"
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = pytest.mark.browser


def _missing(what):
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {what}: `make test` should have installed it")
    pytest.skip(f"{what}: run `make docs` (or `CI=true make test`) to install it")


@pytest.fixture(scope="module")
def chromium():
    path = find_chromium()
    if path is None:
        _missing("no Chromium found")
    return path


@pytest.fixture(scope="module")
def site():
    """Build the site the way `make docs` does, into docs/_build/html."""
    for module in ("sphinx", "myst_nb"):
        try:
            __import__(module)
        except ImportError:
            _missing(f"the docs extra is not installed ({module} is missing)")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(DOCS), str(SITE)],
                          cwd=ROOT, capture_output=True, text=True)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "docs_build.log").write_text(proc.stdout + proc.stderr)
    assert proc.returncode == 0, f"the docs build failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    warnings = [line for line in (proc.stdout + proc.stderr).splitlines() if "WARNING" in line]
    assert not warnings, "the docs build warned:\n" + "\n".join(warnings[:10])
    assert (SITE / "index.html").is_file()
    return SITE


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def course_notebooks():
    return sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


def page_for(notebook):
    return SITE / notebook.relative_to(ROOT).with_suffix(".html")


def output_images(page_html):
    """The pictures a notebook stored (PNG outputs Sphinx wrote to _images)."""
    return re.findall(r'<img[^>]+src="\.\./_images/[^"]+\.png"', page_html)


def maths(page_html):
    return re.findall(r'class="math[ "]', page_html)


# --- static checks on the built files ---------------------------------------------------

def test_every_notebook_and_exercise_has_a_page_and_no_solution_does(site):
    notebooks = course_notebooks()
    exercises = sorted((ROOT / "notebooks" / "exercises").glob("*.ipynb"))
    assert len(notebooks) >= 19 and exercises
    missing = [str(nb.relative_to(ROOT)) for nb in notebooks + exercises if not page_for(nb).is_file()]
    assert not missing, f"no page for {missing}"
    assert (site / "notebooks" / "README.html").is_file(), "the instructors' guide has no page"
    assert not (site / "notebooks" / "solutions").exists(), "the solutions were published"
    index = (site / "index.html").read_text(encoding="utf-8")
    for nb in notebooks:
        assert f'href="notebooks/{nb.stem}.html"' in index, f"{nb.name} is not in the site's contents"


def test_the_notebook_pages_hold_their_pictures_and_maths(site):
    pages = {nb.name: page_for(nb).read_text(encoding="utf-8") for nb in course_notebooks()}
    without_pictures = [name for name, text in pages.items() if not output_images(text)]
    assert not without_pictures, f"notebook pages without their stored pictures: {without_pictures}"
    assert any(maths(text) for text in pages.values()), \
        ("no notebook page has typeset maths: either no notebook writes its formulas as $...$ "
         "in its markdown, or myst's dollarmath did not parse them")
    images = list((site / "_images").glob("*.png"))
    assert images and all(p.stat().st_size > 0 for p in images)


def test_every_public_name_is_documented_under_dp(site):
    import dpteach

    reference = "".join(p.read_text(encoding="utf-8") for p in (site / "reference").glob("*.html"))
    anchors = set(re.findall(r'<dt class="sig[^"]*" id="([^"]+)"', reference))
    names = [n for n in dpteach.__all__ if not n.startswith("_")]
    undocumented = [n for n in names if f"dpteach.{n}" not in anchors]
    assert not undocumented, f"public names without an API entry: {undocumented}"


# --- Chromium ----------------------------------------------------------------------------

def open_offline(browser, server, path):
    """A page that may load from the local server only: anything else is refused and noted."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside = []

    def route(r):
        if r.request.url.startswith(server + "/"):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    failed = []
    page.on("requestfailed", lambda req: failed.append(req.url))
    page.goto(f"{server}/{path}", wait_until="load")
    return page, outside, failed


def test_a_notebook_page_shows_its_pictures_and_typeset_maths(site, server, chromium):
    from playwright.sync_api import sync_playwright

    candidates = [nb for nb in course_notebooks()
                  if maths(t := page_for(nb).read_text(encoding="utf-8")) and output_images(t)]
    assert candidates, "no notebook page has both pictures and maths to show"
    notebook = candidates[0]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page, outside, failed = open_offline(browser, server, f"notebooks/{notebook.stem}.html")
            # the MathJax script is loaded by the time "load" fires; its promise settles
            # when the page is typeset
            typeset = page.evaluate("""async () => {
                if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) return null;
                await MathJax.startup.promise;
                const els = [...document.querySelectorAll('.math')];
                return {math: els.length,
                        rendered: els.filter(e => e.querySelector('mjx-container') || e.tagName === 'MJX-CONTAINER').length,
                        containers: document.querySelectorAll('mjx-container').length,
                        errors: document.querySelectorAll('mjx-merror').length};
            }""")
            pictures = page.evaluate("""async () => {
                const imgs = [...document.querySelectorAll('img')].filter(i => i.src.includes('/_images/'));
                await Promise.all(imgs.map(i => i.decode().catch(() => null)));
                return imgs.map(i => [i.src, i.naturalWidth, i.naturalHeight,
                                      i.getBoundingClientRect().width]);
            }""")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "docs_notebook_page.png"), full_page=False)
        finally:
            browser.close()
    assert not outside, f"the page reached outside the site (it must work offline): {outside[:5]}"
    assert not failed, f"requests that failed: {failed[:5]}"
    assert typeset is not None, f"MathJax did not load on {notebook.stem}.html"
    assert typeset["math"] > 0 and typeset["containers"] > 0, typeset
    assert typeset["rendered"] == typeset["math"], f"maths left untypeset: {typeset}"
    assert typeset["errors"] == 0, f"MathJax reported TeX errors: {typeset}"
    assert pictures, "the notebook page shows no picture"
    blank = [src for src, w, h, _ in pictures if w == 0 or h == 0]
    assert not blank, f"pictures that did not load: {blank}"
    # each at its own size, never shrunk to the text column (its small text unreadable)
    shrunk = [(src, w, shown) for src, w, h, shown in pictures if abs(shown - w) > 1]
    assert not shrunk, f"pictures shown narrower or wider than they are: {shrunk[:3]}"


def test_the_api_page_shows_laplace_mechanism_with_its_signature(site, server, chromium):
    from playwright.sync_api import sync_playwright

    import dpteach

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page, outside, failed = open_offline(browser, server, "reference/dpteach.mechanisms.html")
            entry = page.locator('dt[id="dpteach.laplace_mechanism"]')
            signature = entry.inner_text()
            visible = entry.is_visible()
            body = page.locator('dt[id="dpteach.laplace_mechanism"] + dd').inner_text()
            ARTIFACTS.mkdir(exist_ok=True)
            entry.screenshot(path=str(ARTIFACTS / "docs_api_entry.png"))
        finally:
            browser.close()
    assert not outside, f"the page reached outside the site: {outside[:5]}"
    assert not failed, f"requests that failed: {failed[:5]}"
    assert visible
    flat = " ".join(signature.split())
    assert "dpteach.laplace_mechanism(" in flat.replace("dpteach. ", "dpteach."), flat
    for parameter in ("value", "sensitivity", "epsilon", "rng=None", "size=None"):
        assert parameter in flat, f"{parameter!r} missing from the signature {flat!r}"
    first_line = dpteach.laplace_mechanism.__doc__.strip().splitlines()[0]
    assert " ".join(first_line.split()[:4]) in " ".join(body.split()), \
        f"the docstring is not shown under the signature: {body[:300]!r}"
