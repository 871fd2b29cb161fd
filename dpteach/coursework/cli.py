"""The ``dpteach`` command: hand out the course, make the student copies, grade.

::

    dpteach course [DIR] [--force]          the lessons, the exercises and the guide, into DIR
    dpteach exercises [--solutions S] ...   student copies from the model solutions
    dpteach grade NOTEBOOK ... [options]    grade hand-ins (dpteach.coursework.grading)
    dpteach grade-merge OUT SHARD.csv ...   join the reports of `grade --shard K/N`
    dpteach nbgrader [DIR] [--solutions S]  the coursework as an nbgrader course

``python -m dpteach ...`` is the same command. Every folder it reads or writes by default
is relative to the current folder, never inside the installed package.

The wheel ships the course (``notebooks/`` of the repository, installed as
``dpteach/_course/``) without the model solutions: students install the kit too. So
``exercises`` and ``nbgrader``, which start from the solutions, read them from
``./notebooks/solutions`` (a clone of the repository) or from ``--solutions``.
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["COURSE_FILES", "course_source", "write_course", "main"]

#: what ``dpteach course`` copies, as globs relative to the course folder: the lessons,
#: the guide and the student exercises. The same globs as the package data in
#: pyproject.toml; ``notebooks/solutions/`` is in neither.
COURSE_FILES = ("*.ipynb", "README.md", "exercises/*.ipynb")
DEFAULT_COURSE_DIR = "dpteach-course"
DEFAULT_SOLUTIONS = "notebooks/solutions"
DEFAULT_EXERCISES = "notebooks/exercises"
DEFAULT_NBGRADER_DIR = "nbgrader-course"
_PACKAGE = Path(__file__).resolve().parent.parent


class CommandError(Exception):
    """A refused command; the message names the parameter at fault."""


# ------------------------------------------------------------------ where things are
def course_source() -> Path:
    """The folder the course is copied from: ``dpteach/_course`` in an installed wheel,
    else ``notebooks/`` beside the package (a clone, an editable install)."""
    for folder in (_PACKAGE / "_course", _PACKAGE.parent / "notebooks"):
        if (folder / "README.md").is_file() and any(folder.glob("*.ipynb")):
            return folder
    raise CommandError("the course notebooks are not installed with this copy of dpteach "
                       f"(looked in {_PACKAGE / '_course'} and {_PACKAGE.parent / 'notebooks'})")


def _course_files(source: Path) -> list:
    """The files of the course, relative to ``source``, in a stable order."""
    found = {p.relative_to(source) for pattern in COURSE_FILES for p in source.glob(pattern)
             if p.is_file()}
    return sorted(found, key=lambda p: (len(p.parts), str(p)))


def _outside_package(folder: Path, parameter: str) -> Path:
    """``folder`` made absolute; refused when it lies inside the installed package."""
    target = folder.expanduser().resolve()
    if target == _PACKAGE or _PACKAGE in target.parents:
        raise CommandError(f"{parameter}: {folder} is inside the installed dpteach package "
                           f"({_PACKAGE}); choose a folder of your own")
    return target


# ------------------------------------------------------------------ dpteach course
def write_course(folder, *, force: bool = False) -> list:
    """Copy the course (lessons, exercises, guide) into ``folder``; returns the paths
    written. An existing folder that is not empty is refused unless ``force``: then the
    kit's files in it are replaced and every other file is left alone."""
    source = course_source()
    target = _outside_package(Path(folder), "DIR")
    if target == source.resolve() or source.resolve() in target.parents:
        raise CommandError(f"DIR: {folder} is the course's own source folder ({source})")
    if target.exists() and not target.is_dir():
        raise CommandError(f"DIR: {folder} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise CommandError(f"DIR: {folder} already exists and is not empty; pass --force to "
                           "replace the course files in it (other files are left alone), "
                           "or name a new folder")
    written = []
    for rel in _course_files(source):
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, dest)
        written.append(dest)
    return written


def _course(args) -> int:
    written = write_course(args.dir, force=args.force)
    top = Path(args.dir).expanduser().resolve()
    print(f"wrote the dpteach course to {top}:")
    for path in written:
        print(f"  {path.relative_to(top)}")
    lessons = sum(p.parent == top and p.suffix == ".ipynb" for p in written)
    exercises = sum(p.parent.name == "exercises" for p in written)
    print(f"{lessons} lessons, {exercises} exercise notebooks (exercises/) and the "
          "instructors' guide (README.md).")
    print(f"Open it with:\n  jupyter lab {shlex.quote(str(args.dir))}")
    if importlib.util.find_spec("jupyterlab") is None:
        print('(JupyterLab is not installed here: pip install "dpteach[lab]" brings it)')
    return 0


# ------------------------------------------------------------------ exercises, nbgrader
#: what reading and running notebooks needs beyond the kit's runtime (the grading extra)
_GRADING_PACKAGES = ("nbformat", "nbclient", "jupyter_client", "jupyter_core", "ipykernel")


def _load(name: str):
    """``dpteach.coursework.<name>``, or a clear error when a package of the grading extra
    is missing (a runtime-only install can write the course but not read or run notebooks)."""
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in _GRADING_PACKAGES:
            raise
        raise CommandError(f"this command needs {err.name}, which is not installed: "
                           'pip install "dpteach[grading]"') from err


def _solutions(folder) -> Path:
    path = Path(folder)
    if not path.is_dir() or not any(path.glob("*.ipynb")):
        raise CommandError(
            f"--solutions: no solution notebooks (*.ipynb) in {path} (from {Path.cwd()}). "
            "The model solutions are not installed with the kit, since students install it "
            "too: run this in a clone of the dpteach repository, or pass --solutions FOLDER")
    return path


def _exercises(args) -> int:
    solutions = _solutions(args.solutions)
    out = Path(args.exercises)
    _outside_package(out, "--exercises")
    student_copies = _load("student_copies")              # nbformat: only once it is needed

    if args.check:
        bad = student_copies.stale(solutions, out)
        for name in bad:
            print(f"out of date: {name}")
        if not bad:
            print(f"{out} is up to date with {solutions}")
        return 1 if bad else 0
    for path in student_copies.generate(solutions, out):
        print(f"wrote {path}")
    return 0


def _nbgrader(args) -> int:
    solutions = _solutions(args.solutions)
    _outside_package(Path(args.dir), "DIR")
    nbgrader_export = _load("nbgrader_export")
    for path in nbgrader_export.export(args.dir, solutions):
        print(f"wrote {path}")
    print(f"wrote {Path(args.dir) / 'nbgrader_config.py'}")
    return 0


def _grade(argv) -> int:
    """Everything after ``grade`` goes, unchanged, to :func:`dpteach.coursework.grading.main`."""
    try:
        grading = _load("grading")
    except CommandError as err:
        print(f"dpteach grade: error: {err}", file=sys.stderr)
        return 2
    return grading.main(list(argv))


def _grade_merge(argv) -> int:
    """``dpteach grade-merge OUT SHARD_REPORT ...``: :func:`dpteach.coursework._grade_shards.main`
    (it reads and writes CSV only: no notebook, so no package of the grading extra)."""
    shards = importlib.import_module(f"{__package__}._grade_shards")
    return shards.main(list(argv))


# ------------------------------------------------------------------ the parser
def _version() -> str:
    try:
        from importlib.metadata import version

        return version("dpteach")
    except Exception:                                    # noqa: BLE001 - not installed
        from .. import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpteach",
        description="The dpteach course: write it where you are, make the student copies, "
                    "grade the hand-ins. Every default folder is relative to the current one.",
        epilog="`dpteach COMMAND --help` tells more about each command.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "course", help="write the lessons, the exercises and the guide into a folder",
        description="Write the course: the lesson notebooks, the student exercise notebooks "
                    "(exercises/) and the instructors' guide (README.md). The model "
                    "solutions are not part of it.")
    p.add_argument("dir", nargs="?", default=DEFAULT_COURSE_DIR, metavar="DIR",
                   help=f"the folder to write (default: ./{DEFAULT_COURSE_DIR})")
    p.add_argument("--force", action="store_true",
                   help="write into DIR even when it exists and is not empty: every course "
                        "file is replaced (a filled-in exercise of the same name too), other "
                        "files are left alone")
    p.set_defaults(run=_course)

    p = sub.add_parser(
        "exercises", help="make the student copies from the model solutions",
        description="Blank the cells tagged 'solution' in each solution notebook and write "
                    "the student copies (what `make exercises` does). Exercise notebooks in "
                    "the output folder whose solution is gone are removed.")
    p.add_argument("--solutions", default=DEFAULT_SOLUTIONS, metavar="FOLDER",
                   help=f"the solution notebooks (default: ./{DEFAULT_SOLUTIONS}, as in a "
                        "clone of the repository; the installed kit holds none)")
    p.add_argument("--exercises", default=DEFAULT_EXERCISES, metavar="FOLDER",
                   help=f"where the student copies go (default: ./{DEFAULT_EXERCISES})")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit with status 1 when the exercises are out of date")
    p.set_defaults(run=_exercises)

    # only listed here: `dpteach grade ...` hands its arguments to dpteach.coursework.grading
    # as they are
    sub.add_parser(
        "grade", add_help=False,
        help="grade hand-ins, each in a fresh kernel: dpteach grade NOTEBOOK ... "
             "[--report grades.csv] [--assignment A3] [--timeout S] [--shard K/N] "
             "(see dpteach grade --help)")
    sub.add_parser(
        "grade-merge", add_help=False,
        help="join the reports of `dpteach grade --shard K/N` (K = 1 ... N): dpteach "
             "grade-merge OUT SHARD_REPORT ... (see dpteach grade-merge --help)")

    p = sub.add_parser(
        "nbgrader", help="write the coursework as an nbgrader course",
        description="Write the assignments as an nbgrader course (DIR/source/A1 ... and "
                    "DIR/nbgrader_config.py) from the solution notebooks.")
    p.add_argument("dir", nargs="?", default=DEFAULT_NBGRADER_DIR, metavar="DIR",
                   help=f"the nbgrader course folder (default: ./{DEFAULT_NBGRADER_DIR})")
    p.add_argument("--solutions", default=DEFAULT_SOLUTIONS, metavar="FOLDER",
                   help=f"the solution notebooks (default: ./{DEFAULT_SOLUTIONS})")
    p.set_defaults(run=_nbgrader)
    return parser


def command() -> None:
    """The ``dpteach`` console script and ``python -m dpteach``: :func:`main` in a process
    of its own, which goes without the modules nothing here needs (:func:`main`, called
    from Python, leaves the host's modules alone)."""
    from .._support.lazy import go_without_unneeded_modules
    go_without_unneeded_modules()
    sys.exit(main())


def main(argv=None) -> int:
    """Run the ``dpteach`` command with ``argv`` (default: the process's arguments);
    returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["grade"]:
        return _grade(argv[1:])
    if argv[:1] == ["grade-merge"]:
        return _grade_merge(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (CommandError, FileNotFoundError, ValueError) as err:
        print(f"dpteach {args.command}: error: {err}", file=sys.stderr)
        return 2
