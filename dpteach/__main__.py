"""``python -m dpteach``: the ``dpteach`` command (:mod:`dpteach.coursework.cli`)."""

from .coursework.cli import command

if __name__ == "__main__":
    command()
