"""A small, deterministic world of Chinese news sites that reprint each other's stories.

Two arrangements of it: ``build_world()`` generates sites and reprints from a seed (the
example and the crawl-rate benchmark crawl it), ``small_world()`` is three sites with
reprints and bad pages placed by hand (the crawl tests use it). No Scrapy here: a world is
plain data (pages by path, plus the ground truth of which story each article page tells) and
a stdlib HTTP server, so tests and benchmarks can use it alone.
"""

from .reprint import Draft, make_reprint
from .server import serve
from .sites import Site, default_sites
from .small import small_world
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
    "small_world",
]
