"""A small, deterministic world of Chinese news sites that reprint each other's stories.

No Scrapy here: the world is plain data (pages by path, plus the ground truth of which story
each article page tells) and a stdlib HTTP server, so tests and benchmarks can use it alone.
"""

from .reprint import Draft, make_reprint
from .server import serve
from .sites import Site, default_sites
from .stories import DEFAULT_STORIES, Story
from .world import World, build_world

__all__ = [
    "DEFAULT_STORIES",
    "Draft",
    "Site",
    "Story",
    "World",
    "build_world",
    "default_sites",
    "make_reprint",
    "serve",
]
