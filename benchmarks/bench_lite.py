"""Times the JupyterLite site (`make lite`, _build/lite/) in headless Chromium.

    .venv/bin/python benchmarks/bench_lite.py [--notebooks 00 06 13 20 | --all] [--presses 10]

Prints, per notebook: the kernel ready and the first panel from opening the link (cold: a
new browser profile; warm: the same profile again, its cache filled), Run All, and for
every panel the slider's median and 90th percentile from a key press on its focused
handle to the new picture in the page. Every request to another host is refused (and
counted). Goals (the issue's, not asserted): first panel <= 60 s cold and <= 30 s warm;
slider median <= 150 ms and p90 <= 250 ms.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "system"))

import test_lite as lite  # noqa: E402  (the test's server and browser helpers)

_PANELS = ".jp-OutputArea-output:has(.widget-image):has(.noUi-handle)"


def _notebook(prefix):
    return next(p.stem for p in sorted((ROOT / "notebooks").glob(f"{prefix}_*.ipynb")))


def first_panel_visit(browser, site, notebook):
    """Open the link, wait for the kernel, Run All: seconds to the kernel, to the first
    panel's picture and to the last cell."""
    page = browser.new_page()
    t0 = time.perf_counter()
    lite.open_notebook(page, site, notebook)
    kernel = time.perf_counter() - t0
    lite.run_all(page)
    started = time.perf_counter()
    page.wait_for_selector(".widget-image", state="attached", timeout=600_000)
    first = time.perf_counter() - t0
    lite.wait_until_run(page, notebook)
    return page, kernel, first, time.perf_counter() - started


def slider_times(page, presses):
    """Per panel: seconds from each key press to the new picture."""
    results = []
    count = page.locator(_PANELS).count()
    for i in range(count):
        panel = page.locator(_PANELS).nth(i)
        panel.scroll_into_view_if_needed(timeout=60_000)
        page.wait_for_timeout(300)
        handle = panel.locator(".noUi-handle").first
        image = panel.locator(".widget-image").first
        handle.focus()
        times = []
        for k in range(presses):
            src = image.get_attribute("src")
            key = "ArrowRight" if (k // 3) % 2 == 0 else "ArrowLeft"
            t0 = time.perf_counter()
            page.keyboard.press(key)
            try:
                page.wait_for_function("([el, old]) => el.getAttribute('src') !== old",
                                       arg=[image.element_handle(), src], timeout=20_000, polling="raf")
            except Exception:       # at an end of the range: no new picture
                continue
            times.append(time.perf_counter() - t0)
            page.wait_for_timeout(100)
        label = panel.locator(".widget-slider .widget-label, .widget-hslider .widget-label").first
        results.append((i + 1, (label.text_content() or "").strip(), times))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", nargs="*", default=["00", "06", "13", "20"])
    parser.add_argument("--all", action="store_true", help="every notebook of the course")
    parser.add_argument("--presses", type=int, default=10)
    args = parser.parse_args(argv)
    prefixes = sorted({p.name[:2] for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}) \
        if args.all else args.notebooks
    from playwright.sync_api import sync_playwright

    site = lite.Site()
    rows, foreign = [], []
    with sync_playwright() as p:
        for prefix in prefixes:
            notebook = _notebook(prefix)
            with tempfile.TemporaryDirectory() as profile:
                browser = lite.Browser(p, site, user_data_dir=profile)
                try:
                    page, k_cold, cold, run_all = first_panel_visit(browser, site, notebook)
                    sliders = slider_times(page, args.presses)
                    page.goto("about:blank")
                    page, k_warm, warm, _ = first_panel_visit(browser, site, notebook)
                finally:
                    foreign += browser.foreign
                    browser.close()
            rows.append((notebook, k_cold, cold, k_warm, warm, run_all, sliders))
            print(f"{notebook}: kernel {k_cold:.0f} s, first panel {cold:.0f} s cold; kernel "
                  f"{k_warm:.0f} s, first panel {warm:.0f} s warm; Run All {run_all:.0f} s", flush=True)
            for index, label, times in sliders:
                if times:
                    ms = sorted(1000 * t for t in times)
                    p90 = ms[min(len(ms) - 1, round(0.9 * (len(ms) - 1)))]
                    print(f"    panel {index} (slider {label!r}): median {statistics.median(ms):.0f} ms, "
                          f"p90 {p90:.0f} ms over {len(ms)} presses", flush=True)
    site.close()
    print(f"requests to other hosts: {len(foreign)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
