"""``python -m scrapy_neardup``: the ``neardup`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
