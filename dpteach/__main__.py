"""``python -m dpteach``: the ``dpteach`` command (:mod:`dpteach.cli`)."""

from .cli import command

if __name__ == "__main__":
    command()
