"""``python -m scrapy_neardup.newsworld --port 8000``: serve the news world until Ctrl+C (``--small``: the tests' small world)."""

from __future__ import annotations

import argparse
import time

from . import build_world, serve, small_world


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m scrapy_neardup.newsworld", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each response")
    parser.add_argument("--small", action="store_true", help="the small hand-made world of the crawl tests")
    parser.add_argument(
        "--excerpts", type=int, default=3, help="every n-th story is posted first as a portal's excerpt (0: none)"
    )
    args = parser.parse_args(argv)
    world = small_world() if args.small else build_world(seed=args.seed, excerpt_every=args.excerpts)
    server, base_url = serve(world, args.host, args.port, args.delay)
    copies = world.copies()
    print(
        f"news world at {base_url}: {len(world.pages)} pages, {len(world.story_of)} articles, "
        f"{len(copies)} stories, {len(set(world.site_of.values()))} sites",
        flush=True,
    )
    for path in world.start_paths:
        print(f"  {base_url.rstrip('/')}{path}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
