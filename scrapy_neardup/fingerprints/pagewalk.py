"""The optional C walks of a page's tree (``_pagewalk``), set up once with readability's words
and the hints of a label ("相关新闻", "Related"): the extraction rules call ``walker`` where it is
built and run the same rules in Python where it is None.

One module holds it, so that readability's rules (``readable``), the article's end
(``article_end``) and the text (``extract``) share one walker, and a test can switch the C
walks off in one place.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from readability.readability import REGEXES

# A character or word part that every label of readable's label pattern holds: a cheap test
# before the full one (in C and in Python).
LABEL_HINT_CHARS = "关荐热评留帖复读排多猜看延闻章道链题讯图视"
LABEL_HINT_WORDS = ["elated", "ecommend", "ore", "opular", "rending", "ead", "omment", "ike"]


def _load_walker() -> Any:
    """The C module ``_pagewalk`` set up with readability's words, or None where it is not
    built or readability's patterns are not plain word lists."""
    try:
        walker = importlib.import_module(f"{__package__}._pagewalk")
    except ImportError:  # pragma: no cover - installs without a compiler run the rules in Python
        return None
    words = []
    for name in ("unlikelyCandidatesRe", "okMaybeItsACandidateRe", "positiveRe", "negativeRe"):
        pattern = REGEXES[name]
        listed = pattern.pattern.split("|")
        if not pattern.flags & re.IGNORECASE or not all(re.fullmatch(r"[a-z -]+", word) for word in listed):
            return None  # a readability whose patterns are more than words: its rules in Python
        words.append(listed)
    walker.configure(*words, LABEL_HINT_CHARS, LABEL_HINT_WORDS)
    return walker


walker: Any = _load_walker()
