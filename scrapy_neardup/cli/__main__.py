"""``python -m scrapy_neardup.cli``: the ``neardup`` command."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
