"""``python -m dpteach``: the ``dpteach`` command (:mod:`dpteach.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
