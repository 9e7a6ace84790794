"""Makes the example project's news world (package ``newsworld``) importable: the tests use it too.

Imported by the test modules that build on the world, so that a subprocess which puts only
``tests/`` on ``sys.path`` finds it as well.
"""

import sys
from pathlib import Path

EXAMPLE_PROJECT = Path(__file__).resolve().parent.parent / "example_project"
if str(EXAMPLE_PROJECT) not in sys.path:
    sys.path.insert(0, str(EXAMPLE_PROJECT))
