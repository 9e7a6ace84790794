"""One Redis's check-and-add scripts of two trees, taking turns on the same fingerprints.

Two namespaces of one redis-server, one checked with this tree's scripts and one with the
scripts of ``--base DIR`` (``git archive COMMIT | tar -x -C DIR``; only its ``lua/`` files are
read), batch by batch in turn (the order swapped every batch), each batch as
``Detector.check_many`` sends it. Per tree: the server's CPU and the wall time of its batches,
and the documents kept. ``--reserve`` files documents pending and commits the kept ones after
each batch, as a crawl does.

    python benchmarks/redis_boilerplate_ab.py --base /tmp/main-tree --docs 6000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import corpus  # benchmarks/corpus.py
import redis_cluster  # benchmarks/redis_cluster.py: the stream and its fingerprints
from redis_throughput import load, server_cpu, start_redis_server

from scrapy_neardup import UNIQUE, Detector, Recipe, open_store
from scrapy_neardup.stores.redis import store as redis_store

BATCH = 64


def base_script(base: Path) -> str:
    """The batch check-and-add script of the tree at ``base``, joined as the store joins it."""
    folder = base / "scrapy_neardup" / "stores" / "redis" / "lua"
    names = ("mark", "live", "check", "check_and_add_many")
    return "\n".join((folder / f"{name}.lua").read_text(encoding="utf-8") for name in names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    corpus.add_data_option(parser)
    parser.add_argument("--base", type=Path, required=True, help="the tree to compare (its lua/ files)")
    parser.add_argument("--docs", type=int, default=6000, help="documents checked by each tree (default 6,000)")
    parser.add_argument("--reserve", action="store_true", help="file pending, commit the kept (as a crawl)")
    args = parser.parse_args()

    recipe = Recipe(tokenizer="rjieba")
    redis_cluster._RECIPE = recipe
    docs = redis_cluster.stream(args.docs, args.data)
    prints = redis_cluster.fingerprint_all([text for _, _, text in docs])
    documents = [(key, fp) for (key, _, _), fp in zip(docs, prints)]
    process, port, _ = start_redis_server()
    try:
        uri = f"redis://127.0.0.1:{port}/0"
        quick = {"redis_allow_no_persistence": True}  # a throwaway server
        stores = {
            "base": open_store(uri, "base", recipe, **quick),
            "this tree": open_store(uri, "this", recipe, **quick),
        }
        base = stores["base"]
        assert isinstance(base, redis_store.RedisStore)
        script = base_script(args.base)
        base._check_and_add_many = base.client.register_script(script)
        base.client.script_load(script)
        detectors = {name: Detector(store) for name, store in stores.items()}
        cpu = dict.fromkeys(stores, 0.0)
        wall = dict.fromkeys(stores, 0.0)
        kept = dict.fromkeys(stores, 0)
        for number, start in enumerate(range(0, len(documents), BATCH)):
            batch = documents[start : start + BATCH]
            order = list(stores) if number % 2 == 0 else list(reversed(stores))
            for name in order:
                cpu0, wall0 = server_cpu(base.client), time.perf_counter()
                verdicts = detectors[name].check_many(batch, reserve=args.reserve)
                for verdict in verdicts:
                    if verdict.status == UNIQUE:
                        kept[name] += 1
                        if args.reserve:
                            stores[name].commit(verdict.doc_id)
                wall[name] += time.perf_counter() - wall0
                cpu[name] += server_cpu(base.client) - cpu0
        for store in stores.values():
            store.close()
        mode = "reserved, kept committed after each batch" if args.reserve else "committed"
        print(f"{len(documents)} documents a tree, batches of {BATCH}, {mode}; {load()}")
        print("| tree | kept | server CPU µs/doc | wall ms/batch |")
        print("|---|---|---|---|")
        batches = -(-len(documents) // BATCH)
        for name in stores:
            print(
                f"| {name} | {kept[name]} | {1e6 * cpu[name] / len(documents):.0f} | {1e3 * wall[name] / batches:.1f} |"
            )
        print(
            f"this tree / base: server CPU {cpu['this tree'] / cpu['base']:.3f}, wall {wall['this tree'] / wall['base']:.3f}"
        )
    finally:
        process.kill()


if __name__ == "__main__":
    main()
