"""What a university needs to adopt the kit: the licence text, a citation file, project
links, classifiers, the typing marker, a changelog for this version; and the wheel built
from this tree carries the licence and py.typed."""

import datetime
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_licence_is_the_mit_text():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 the dpteach authors" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND" in text
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]


def test_citation_file_is_cff_1_2_0():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    for key in ("cff-version", "message", "title", "authors"):         # required by CFF
        assert cff.get(key), f"CITATION.cff needs {key}"
    assert cff["cff-version"] == "1.2.0"
    assert all(isinstance(a, dict) and (a.get("name") or a.get("family-names"))
               for a in cff["authors"])
    assert str(cff["version"]) == PROJECT["version"]
    datetime.date.fromisoformat(str(cff["date-released"]))
    assert cff["license"] == PROJECT["license"]
    assert cff["repository-code"] == PROJECT["urls"]["Source"]


def test_project_urls_share_one_placeholder_the_readme_explains():
    urls = PROJECT["urls"]
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    orgs = {next(g for g in re.search(r"github\.com/([^/]+)|//([^./]+)\.github\.io", u).groups()
                 if g) for u in urls.values()}
    assert len(orgs) == 1, f"one organisation in every project URL, got {orgs}"
    readme = (ROOT / "README.md").read_text()
    assert orgs.pop() in readme and "Publishing" in readme


def test_classifiers_name_the_tested_pythons_and_the_audience():
    classifiers = PROJECT["classifiers"]
    floor = re.search(r">=\s*(3\.\d+)", PROJECT["requires-python"]).group(1)
    assert f"Programming Language :: Python :: {floor}" in classifiers
    for needed in ("Intended Audience :: Education", "Framework :: Jupyter", "Typing :: Typed"):
        assert needed in classifiers
    # with an SPDX `license` (PEP 639) a licence classifier is refused by the build
    assert not any(c.startswith("License ::") for c in classifiers)


def test_changelog_describes_this_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    m = re.search(rf"^## {re.escape(PROJECT['version'])}\b.*$", text, re.M)
    assert m, f"CHANGELOG.md needs a '## {PROJECT['version']}' entry"
    assert len(text[m.end():].split("\n## ")[0].strip()) > 200


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    uv = pathlib.Path(sys.executable).parent / "uv"
    uv = str(uv) if uv.exists() else shutil.which("uv")
    if uv:
        cmd = [uv, "build", "--wheel", "--quiet", "--out-dir", str(out), str(ROOT)]
    else:
        cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
               str(ROOT)]
    built = subprocess.run(cmd, capture_output=True, text=True, cwd=out)
    assert built.returncode == 0, built.stderr[-4000:]
    (path,) = out.glob("dpteach-*.whl")
    with zipfile.ZipFile(path) as zf:
        return zf.namelist(), zf.read(next(n for n in zf.namelist()
                                           if n.endswith(".dist-info/METADATA"))).decode()


def test_wheel_carries_the_licence_and_the_typing_marker(wheel):
    names, _ = wheel
    assert "dpteach/py.typed" in names
    assert any(re.fullmatch(r"dpteach-[^/]+\.dist-info/licenses/LICENSE", n) for n in names)
    assert not any(n.startswith(("tests/", "benchmarks/", "binder/")) for n in names)


def test_wheel_metadata_keeps_the_runtime_apart_from_the_extras(wheel):
    _, metadata = wheel
    plain = [line for line in metadata.splitlines()
             if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert not any(re.search(r"jupyterlab|voila|nbclient|pytest", line) for line in plain)
    for extra in ("lab", "grading", "test"):
        assert f"Provides-Extra: {extra}" in metadata
    assert "License-Expression: MIT" in metadata
    assert "Project-URL: Source," in metadata
