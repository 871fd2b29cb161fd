"""The package list for setuptools; everything else is in pyproject.toml.

pyproject.toml can either list the packages or find them, not both: finding them keeps
every new subpackage of dpteach in the wheel, and the two course packages are added by
hand because they are folders of notebooks (notebooks/ and notebooks/exercises/, mapped to
dpteach._course by [tool.setuptools.package-dir]), not Python packages on disk.
"""

from setuptools import find_packages, setup

COURSE_PACKAGES = ["dpteach._course", "dpteach._course.exercises"]

setup(packages=find_packages(include=["dpteach", "dpteach.*"]) + COURSE_PACKAGES)
