"""`python -m pytest_grounding`: the commands live in `pytest_grounding.cli`."""

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
