"""Worker processes leave Ctrl-C to their parent.

Ctrl-C in a terminal reaches the whole process group: a crawl's worker processes and those of
``neardup --workers`` as well as the process that started them. The parent decides when its
workers stop (it closes their input, or shuts its pool down); a worker ending on the signal
would print a traceback and lose the pages it holds, to be prepared again one at a time.
"""

from __future__ import annotations

import signal


def ignore_interrupts() -> None:
    """Called first in a worker process, before its heavy imports: SIGINT is ignored there."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
