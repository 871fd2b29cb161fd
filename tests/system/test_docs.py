"""The course website: Sphinx builds it from the committed notebooks (never executing them)
and the package's docstrings, and a real Chromium reads two of its pages offline.

The build is the one `make docs` makes (`docs/_build/html`): if `make docs` ran before, this
is an incremental rebuild that only re-reads what changed. Then, in Chromium through
Playwright, served from 127.0.0.1 with every other address refused:
- a course notebook page shows its pictures (each `<img>` decoded, naturalWidth > 0) and its
  formulas typeset by the MathJax copy the site ships (an `mjx-container` in every maths
  element, no TeX error);
- the API page of `dpteach.mechanisms` shows `dpteach.laplace_mechanism` with its signature
  and docstring, and the API pages typeset their formulas with that MathJax (no TeX error).
The static checks beside them: every notebook and exercise has a page, no solution has one,
every name in `dpteach.__all__` is documented under `dpteach.NAME`, the formulas of
laplace_mechanism, gaussian_sigma, advanced_composition and randomized_response are maths
on their API pages, and every formula of the API pages renders in KaTeX.

The docstrings stay plain text (they are read with `help()` in a notebook): the docs
extension (docs/docstrings.py, docs/plainmath.py) finds their formulas and writes them as
LaTeX. The unit tests of that translation need no build and carry no browser mark.

Skipped, with a message, when Chromium or the docs tools are missing -- except under CI=true,
where a missing one is a failure.
"""

import functools
import html
import http.server
import inspect
import os
import pathlib
import re
import subprocess
import sys
import threading

import pytest

from test_browser import CHROMIUM_ARGS, find_chromium
from test_notebook_text import katex_failures

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SITE = DOCS / "_build" / "html"
ARTIFACTS = ROOT / "test-artifacts"
sys.path.insert(0, str(DOCS))

import docstrings  # noqa: E402  (docs/docstrings.py)
import plainmath  # noqa: E402  (docs/plainmath.py)

browser = pytest.mark.browser  # the tests that need the built site (and Chromium)


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

@browser
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


@browser
def test_the_notebook_pages_hold_their_pictures_and_maths(site):
    pages = {nb.name: page_for(nb).read_text(encoding="utf-8") for nb in course_notebooks()}
    without_pictures = [name for name, text in pages.items() if not output_images(text)]
    assert not without_pictures, f"notebook pages without their stored pictures: {without_pictures}"
    assert any(maths(text) for text in pages.values()), \
        ("no notebook page has typeset maths: either no notebook writes its formulas as $...$ "
         "in its markdown, or myst's dollarmath did not parse them")
    images = list((site / "_images").glob("*.png"))
    assert images and all(p.stat().st_size > 0 for p in images)


@browser
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


@browser
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


@browser
def test_the_api_page_shows_laplace_mechanism_with_its_signature(site, server, chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page, outside, failed = open_offline(browser, server, "reference/dpteach.mechanisms.html")
            typeset = page.evaluate(TYPESET)
            entry = page.locator('dt[id="dpteach.laplace_mechanism"]')
            signature = entry.inner_text()
            visible = entry.is_visible()
            dd = page.locator('dt[id="dpteach.laplace_mechanism"] + dd')
            body = dd.inner_text()
            formulas = dd.locator("mjx-container").count()
            ARTIFACTS.mkdir(exist_ok=True)
            page.locator('dl:has(> dt[id="dpteach.laplace_mechanism"])').screenshot(
                path=str(ARTIFACTS / "docs_api_entry.png"))
            # the accounting page too: advanced composition's formula
            other, outside2, failed2 = open_offline(browser, server, "reference/dpteach.accounting.html")
            typeset_accounting = other.evaluate(TYPESET)
        finally:
            browser.close()
    assert not outside + outside2, f"the pages reached outside the site: {(outside + outside2)[:5]}"
    assert not failed + failed2, f"requests that failed: {(failed + failed2)[:5]}"
    assert visible
    flat = " ".join(signature.split())
    assert "dpteach.laplace_mechanism(" in flat.replace("dpteach. ", "dpteach."), flat
    for parameter in ("value", "sensitivity", "epsilon", "rng=None", "size=None"):
        assert parameter in flat, f"{parameter!r} missing from the signature {flat!r}"
    words = " ".join(body.split())
    assert words.startswith("Release") and "i.i.d. per coordinate [DR14 Def. 3.3]" in words, \
        f"the docstring is not shown under the signature: {body[:300]!r}"
    assert formulas >= 2, f"laplace_mechanism's formulas are not typeset: {body[:300]!r}"
    for name, result in (("mechanisms", typeset), ("accounting", typeset_accounting)):
        assert result is not None, f"MathJax did not load on the {name} API page"
        assert result["math"] > 20 and result["rendered"] == result["math"], (name, result)
        assert result["errors"] == 0, f"MathJax reported TeX errors on the {name} page: {result}"


#: in the page: wait for MathJax, then count maths elements, typeset ones and TeX errors
TYPESET = """async () => {
    if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) return null;
    await MathJax.startup.promise;
    const els = [...document.querySelectorAll('.math')];
    return {math: els.length,
            rendered: els.filter(e => e.querySelector('mjx-container') || e.tagName === 'MJX-CONTAINER').length,
            errors: document.querySelectorAll('mjx-merror').length};
}"""


# --- the formulas of the API pages -------------------------------------------------------

def entry_html(page_html, name):
    """The HTML of one API entry: its <dt> and the <dd> under it."""
    start = page_html.index(f'id="{name}"')
    return page_html[start:page_html.index("</dd>", start)]


def html_maths(page_html):
    """(display, LaTeX) for every formula Sphinx wrote for MathJax: \\( \\) inline, \\[ \\] shown."""
    inline = [(False, html.unescape(m)) for m in
              re.findall(r'<span class="math notranslate nohighlight">\\\((.*?)\\\)</span>', page_html, re.S)]
    shown = [(True, html.unescape(m)) for m in
             re.findall(r'<div class="math notranslate nohighlight">\s*\\\[(.*?)\\\]\s*</div>', page_html, re.S)]
    return inline + shown


#: page, entry -> LaTeX its docstring's formula must be typeset as
TYPESET_FORMULAS = [
    ("dpteach.mechanisms", "dpteach.laplace_mechanism",
     r"\mathrm{value} + \mathrm{Lap}(\mathrm{sensitivity}/\varepsilon)"),
    ("dpteach.mechanisms", "dpteach.gaussian_sigma",
     r"\sigma = \sqrt{2\ln(1.25/\delta)} \cdot \Delta_{2}/\varepsilon"),
    ("dpteach.accounting", "dpteach.advanced_composition",
     r"\varepsilon' = \varepsilon \sqrt{2k \ln(1/\delta')} + k \varepsilon(e^{\varepsilon} - 1)"),
    ("dpteach.mechanisms", "dpteach.randomized_response",
     r"e^{\varepsilon}/(1 + e^{\varepsilon})"),
    ("dpteach.rdp", "dpteach.subsampled_gaussian_rdp",
     r"A_{\alpha} = \sum_{i = 0}^{\alpha}C(\alpha, i)(1 - q)^{\alpha - i}q^{i}"
     r"\exp((i^{2} - i)/(2\sigma^{2}))."),
]


@browser
@pytest.mark.parametrize("page, name, latex", TYPESET_FORMULAS,
                         ids=[name.split(".")[-1] for _, name, _ in TYPESET_FORMULAS])
def test_the_api_pages_typeset_the_formulas(site, page, name, latex):
    text = (site / "reference" / f"{page}.html").read_text(encoding="utf-8")
    maths = [tex for _, tex in html_maths(entry_html(text, name))]
    assert latex in maths, f"{name}: {latex!r} is not among its typeset formulas {maths}"


@browser
def test_every_formula_of_the_api_pages_renders_and_literal_blocks_stay_literal(site):
    """Every LaTeX string the API pages hand to MathJax renders in KaTeX (a broken twin
    is caught); a block that is not a formula is still shown as written."""
    pages = sorted((site / "reference").glob("*.html"))
    items = [[f"{p.name}", display, tex] for p in pages
             for display, tex in html_maths(p.read_text(encoding="utf-8"))]
    assert len(items) > 1000, len(items)
    twins = [["twin", False, "\\frac{1}{"], ["twin", True, "\\sqrt{2k \\ln(1/\\delta')"]]
    failures = katex_failures(items + twins)
    assert len([f for f in failures if f.startswith("twin")]) == 2, failures
    failures = [f for f in failures if not f.startswith("twin")]
    assert not failures, "API formulas KaTeX cannot render:\n" + "\n".join(failures[:20])
    def shown(page):  # the page's text, literal blocks' highlighting removed
        text = (site / "reference" / page).read_text(encoding="utf-8")
        return html.unescape(re.sub(r"<[^>]+>", "", text))

    assert "for i = 1, 2, ...:      nu_i ~ Lap(4 Delta / epsilon)" in shown(
        "dpteach.sparse_vector.html"), "the AboveThreshold pseudo-code is not shown as written"
    attack = shown("dpteach.attacks.floating_point.html")
    assert "log(1 - 2|u|)" in attack and "\\|u\\|" not in attack, \
        "a literal block shows its bars escaped"


# --- the translation, without a build ------------------------------------------------------

#: sentences of the package's docstrings -> the LaTeX of the formulas found in them
SENTENCES = [
    # mechanisms.laplace_mechanism: its parameters are words of the formula
    ("Release value + Lap(sensitivity / epsilon), i.i.d. per coordinate [DR14 Def. 3.3].",
     ("value", "sensitivity", "epsilon"),
     [r"\mathrm{value} + \mathrm{Lap}(\mathrm{sensitivity}/\varepsilon)"]),
    # mechanisms.gaussian_sigma
    ("Classic: sigma = sqrt(2 ln(1.25/delta)) * Delta_2 / epsilon [DR14 Theorem A.1].", (),
     [r"\sigma = \sqrt{2\ln(1.25/\delta)} \cdot \Delta_{2}/\varepsilon"]),
    ("The theorem only holds for 0 < epsilon < 1 -- seed 002 leaves that condition out", (),
     [r"0 < \varepsilon < 1"]),
    ("sigma * (1 - 1e-9) already misses it.", (), [r"\sigma \cdot (1 - 10^{-9})"]),
    # accounting.advanced_composition
    ("The k-fold composition of an (eps, delta)-DP mechanism is (eps', k delta + delta')-DP\n"
     "with eps' = eps sqrt(2 k ln(1/delta')) + k eps (e^eps - 1)\n(Dwork, Rothblum & Vadhan 2010",
     (), [r"(\varepsilon, \delta)", r"(\varepsilon', k \delta + \delta')",
          r"\varepsilon' = \varepsilon \sqrt{2k \ln(1/\delta')} + k \varepsilon(e^{\varepsilon} - 1)"]),
    # accounting.advanced_composition_crossover: a formula goes on after a trailing <=>
    ("sqrt(2 k ln(1/delta')) < k (2 - e^eps)  <=>\nk > 2 ln(1/delta') / (2 - e^eps)^2, which "
     "needs e^eps < 2, i.e. eps < ln 2.", (),
     [r"\sqrt{2k \ln(1/\delta')} < k(2 - e^{\varepsilon}) \iff k > 2\ln(1/\delta')/(2 - e^{\varepsilon})^{2}",
      r"e^{\varepsilon} < 2", r"\varepsilon < \ln 2"]),
    # panels.composition: the same bound in Unicode
    ("Total ε after k (ε, 0)-DP mechanisms: basic composition kε against advanced\n"
     "composition ε√(2k ln(1/δ')) + kε(e^ε − 1) (Dwork", (),
     [r"\varepsilon", r"(\varepsilon, 0)", r"k \varepsilon",
      r"\varepsilon \sqrt{2k \ln(1/\delta')} + k \varepsilon(e^{\varepsilon} - 1)"]),
    # mechanisms.randomized_response and its estimate
    ("Report each bit truthfully with probability e^eps/(1+e^eps), else its flip.", (),
     [r"e^{\varepsilon}/(1 + e^{\varepsilon})"]),
    ("Its standard error is sqrt(q(1-q)/n) / (2p - 1) with q the chance", (),
     [r"\sqrt{q(1 - q)/n}/(2p - 1)"]),
    # local.k_randomized_response_estimate: an estimator's hat and subscripts
    ("so f_hat_v = (c_v / n - q) / (p - q) [Wang et al. 2017]. Not clipped", (),
     [r"\hat{f}_{v} = (c_{v}/n - q)/(p - q)"]),
    # beyond_global: a maximum with its range, a negative exponent
    ("S(x) = max_{k >= 0} e^(-k beta) A(k) [NRS07]", (),
     [r"S(x) = \max_{k \ge 0}e^{-k \beta}A(k)"]),
    # mechanisms.gaussian_mechanism: a normal distribution
    ("Release value + N(0, sigma^2) per coordinate", ("value",),
     [r"\mathrm{value} + \mathcal{N}(0, \sigma^{2})"]),
    # a bracket after a space multiplies only a sum or a power; otherwise it is a remark
    ("an analytic Gaussian with noise multiplier σ (σ/Δ), at total ε", (),
     [r"\sigma", r"(\sigma/\Delta)", r"\varepsilon"]),
    ("the central Laplace histogram: 2 (Δ/ε)^2 / n^2.", (), [r"2(\Delta/\varepsilon)^{2}/n^{2}"]),
    # rdp.composition_epsilons: a subscript inside an exponent; mechanisms: a remark
    ("- \"advanced\": ε₀√(2k ln(1/δ')) + kε₀(e^ε₀ − 1) (DR14 Theorem 3.20);", (),
     [r"\varepsilon_{0}\sqrt{2k \ln(1/\delta')} + k \varepsilon_{0}(e^{\varepsilon_{0}} - 1)"]),
    ("the estimate's error grows as ε -> 0 (2p - 1 ~ ε/2).", (),
     [r"\varepsilon \to 0", r"(2p - 1 \sim \varepsilon/2)"]),
    # clipping.clipped_mean_error: "delta method" is the statistician's name, not δ
    ("The noise line is the delta method for (S + e_s)/(n + e_c) ~ S/n + e_s/n.", (),
     [r"(S + e_{s})/(n + e_{c}) \sim S/n + e_{s}/n"]),
    # prose that looks like maths stays prose
    ("* Task 3a/3b (1 point each); ages < 30, 3*, >= 40 (30-39); k-RR's Var* is below", (), []),
    ("keep the tail mass in log space, on log-log axes; the max over the subset sum d(S)", (), []),
    ("returns a (ε, δ) pair", (), [r"(\varepsilon, \delta)"]),
]


@pytest.mark.parametrize("text, parameters, expected", SENTENCES,
                         ids=[f"sentence{i}" for i in range(len(SENTENCES))])
def test_plain_formulas_translate_to_latex(text, parameters, expected):
    assert [latex for _, _, latex in plainmath.find_formulas(text, parameters)] == expected


#: displayed lines (indented blocks of the docstrings) -> LaTeX
DISPLAYED = [
    ("D_α(P || Q) = 1/(α - 1) · ln E_Q[(P/Q)^α].",   # rdp
     r"D_{\alpha}(P \,\|\, Q) = 1/(\alpha - 1) \cdot \ln \mathbb{E}_{Q}[(P/Q)^{\alpha}]."),
    ("A_α = Σ_{i=0}^{α} C(α, i) (1 - q)^(α - i) q^i exp((i² - i)/(2σ²)).",   # rdp, subsampled
     r"A_{\alpha} = \sum_{i = 0}^{\alpha}C(\alpha, i)(1 - q)^{\alpha - i}q^{i}\exp((i^{2} - i)/(2\sigma^{2}))."),
    ("Var[f_hat_v] = q (1 - q) / (n (p - q)^2) + f_v (1 - p - q) / (n (p - q)).",   # local
     r"\operatorname{Var}[\hat{f}_{v}] = q(1 - q)/(n(p - q)^{2}) + f_{v}(1 - p - q)/(n(p - q))."),
]


@pytest.mark.parametrize("line, latex", DISPLAYED, ids=["renyi", "subsampled", "variance"])
def test_displayed_formulas_translate_to_latex(line, latex):
    assert plainmath.translate_formula(line) == latex


@pytest.mark.parametrize("line", [
    "for i = 1, 2, ...:      nu_i ~ Lap(4 Delta / epsilon)",   # sparse_vector: pseudo-code
    "dpteach grade NOTEBOOK ... [options]    grade hand-ins",   # cli: a table
    "= sqrt(8 D^2 + 8 m^2) / (epsilon n),   m = mean(clip(x)), D = max(|lower|, |upper|)",
    "u     = rng.random() - 0.5                 # 53-bit uniform k / 2^53, shifted: exact",
])
def test_a_line_that_is_not_all_formula_is_refused(line):
    with pytest.raises(plainmath.NotMath):
        plainmath.translate_formula(line)


def test_a_docstring_keeps_its_words_and_gets_maths_and_literal_blocks():
    doc = inspect.cleandoc("""
        The ratio |x| is e^eps at most (see ``f(|x|)``):

            D_α(P || Q) = 1/(α - 1) · ln E_Q[(P/Q)^α].

        It reports the first query above a noisy threshold::

            for i = 1, 2, ...:      nu_i ~ Lap(4 Delta / epsilon)
                                    if |a_i| >= T: stop
        """)
    out = docstrings.clean(doc.splitlines())
    assert out[0] == r"The ratio \|x\| is :math:`e^{\varepsilon}` at most (see ``f(|x|)``):"
    assert out[2:5] == [".. math::", "", r"   D_{\alpha}(P \,\|\, Q) = 1/(\alpha - 1) \cdot \ln \mathbb{E}_{Q}[(P/Q)^{\alpha}]."]
    assert "    for i = 1, 2, ...:      nu_i ~ Lap(4 Delta / epsilon)" in out
    assert "                            if |a_i| >= T: stop" in out, "a literal block was escaped"
    words = re.sub(r":math:`[^`]*`", "", " ".join(out))
    for word in ("ratio", "at most", "reports the first query above a noisy threshold"):
        assert word in words


def test_a_table_of_aligned_columns_stays_as_written():
    doc = inspect.cleandoc("""
        The bias and the noise:

        bias     = mean(clip(x, lower, upper)) - mean(x)
        noise_sd = sqrt(Var(sum noise) + m^2 Var(count noise)) / n
                 = sqrt(8 D^2 + 8 m^2) / (epsilon n)

        with m the clamped mean.
        """)
    out = docstrings.clean(doc.splitlines())
    assert out[2:5] == ["::", "", "    bias     = mean(clip(x, lower, upper)) - mean(x)"]
    assert "             = sqrt(8 D^2 + 8 m^2) / (epsilon n)" in out
    assert out[-1] == "with m the clamped mean."


def test_every_docstring_formula_renders_in_katex():
    """All formulas the extension writes for the package's docstrings render in KaTeX,
    without building the site (a broken twin is caught)."""
    import importlib

    import apigen

    items = []
    for modname in apigen.public_modules():
        module = importlib.import_module(modname)
        objects = [module] + [getattr(module, n) for n in apigen._own_members(module)]
        for obj in objects:
            doc = inspect.getdoc(obj)
            if not doc:
                continue
            text = "\n".join(docstrings.clean(doc.splitlines(), docstrings.parameter_names(obj)))
            items += [[modname, False, tex] for tex in re.findall(r":math:`([^`]*)`", text)]
            for block in re.findall(r"^\.\. math::\n\n((?:   .*\n*)+)", text + "\n", re.M):
                items += [[modname, True, line.strip()] for line in block.splitlines() if line.strip()]
    assert len(items) > 1000, len(items)
    failures = katex_failures(items + [["twin", False, "e^{\\varepsilon"]])
    assert failures and failures[-1].startswith("twin"), failures
    assert not failures[:-1], "docstring formulas KaTeX cannot render:\n" + "\n".join(failures[:20])
