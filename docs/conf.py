"""Sphinx configuration for the dpteach course website.

The course pages come straight from the committed, executed notebooks in ``../notebooks``
(never re-executed here); the API reference is generated from the package's docstrings.
``make docs`` builds the site into ``docs/_build/html``.

Two things are made at the start of each build, inside ``docs/`` and ignored by git:
- ``docs/notebooks``: a symbolic link to ``../notebooks``, so Sphinx reads the notebooks and
  the instructors' guide where they live instead of from a copy;
- ``docs/reference/``: one page per public module of ``dpteach``, written from the package
  itself (every name reachable as ``dp.NAME`` is documented under that name).
"""

from __future__ import annotations

import os
import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))

import dpteach  # noqa: E402
import apigen  # noqa: E402  (docs/apigen.py)
from sphinx.util import logging  # noqa: E402

logger = logging.getLogger("dpteach.docs")


project = "dpteach"
author = "the dpteach authors"
copyright = "the dpteach authors, MIT licence"
release = version = dpteach.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 shipped inside a PyPI package and copied into _static/mathjax, so the
    # maths typesets without reaching any CDN (a closed network, a lecture hall, CI)
    "sphinx-mathjax-offline",
    # docs/docstrings.py: the plain-text docstrings made safe for reST, word for word, their
    # formulas typeset (docs/plainmath.py translates the kit's notation into LaTeX)
    "docstrings",
]

root_doc = "index"
exclude_patterns = [
    "_build",
    "**/.ipynb_checkpoints",
    "notebooks/solutions",  # the site shows the student copies, never the solutions
    "notebooks/**/*.py",
]

# --- notebooks: rendered from their stored outputs, never executed ------------------------
nb_execution_mode = "off"
nb_merge_streams = True
# the notebooks hold no saved widget state: no widget manager script to fetch from a CDN
nb_ipywidgets_js = {}
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# the guide links to files beside it (Makefile targets, scripts) that are not pages here
suppress_warnings = ["myst.xref_missing", "myst.header", "misc.highlighting_failure"]

# --- API reference ---------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autosummary_generate = False
nitpicky = False

# --- HTML -------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = f"dpteach {release}"
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": True,
    "home_page_in_toc": True,
    # the left sidebar lists pages, not their sections: a deeper one makes every page carry
    # (and the build compute) the whole site's table of contents
    "max_navbar_depth": 2,
}
# docs/_static/dpteach.css: a notebook's pictures at their own size (no shrinking to the
# text column, where their legends and ticks become unreadable)
html_static_path = ["_static"]
html_css_files = ["dpteach.css"]
html_copy_source = False
html_show_sourcelink = False


# --- made at the start of each build ---------------------------------------------------

def _link_notebooks() -> None:
    link = DOCS / "notebooks"
    target = os.path.relpath(ROOT / "notebooks", DOCS)
    if link.is_symlink() and os.readlink(link) == target:
        return
    if link.is_symlink():
        link.unlink()
    elif link.exists():
        raise RuntimeError(f"{link} exists and is not the link to ../notebooks; remove it")
    link.symlink_to(target, target_is_directory=True)


def _prepare_sources(app) -> None:
    _link_notebooks()
    skipped: dict[str, str] = {}
    apigen.write_reference(DOCS / "reference", skipped)
    for name, reason in skipped.items():
        logger.warning("API reference: %s left out (%s)", name, reason)


def setup(app):
    # before Sphinx looks for its source files
    app.connect("builder-inited", _prepare_sources)
