"""What ``neardup serve``'s HTTP front end costs a request, apart from the check.

The service's own front end (``serve.http.ServeSite``: a Twisted protocol reading requests
with httptools) runs in a process of its own, its entries answering every ``POST /check`` with a fixed answer of the service's shape (one
similar entry of 1,500 characters with 12 passages, then an answer listing none, in turn), so
that what is measured is reading the request, parsing its JSON, writing the answer's JSON and
the HTTP around them. The same requests go to the same site writing JSON with the standard
library instead of orjson, and, when uvicorn is installed, to an ASGI app doing the same work
on uvicorn with httptools (one process, its asyncio loop). Printed: the server's CPU a request
(user and system) and requests a second, from ``benchmarks/serve.py``'s client (16 keep-alive
connections). Front ends take turns, ``--rounds`` times: compare them within one run.

    python benchmarks/serve_front.py
    python benchmarks/serve_front.py --requests 20000 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import FillerTexts, add_data_option, load_articles, sentence_pool
from serve import load_average, request_bytes, send_all

TICKS = os.sysconf("SC_CLK_TCK")

SERVER = r"""
import itertools, json, socket, sys
from scrapy_neardup.serve import jsonbody

kind, answers = sys.argv[1], itertools.cycle(json.loads(sys.stdin.read()))
if kind.startswith("twisted"):
    from twisted.internet import reactor
    from scrapy_neardup.serve.http import ServeSite

    if kind == "twisted-stdlib-json":
        jsonbody.orjson = None

    class FixedAnswers:
        def check(self, body):
            return next(answers)

    port = reactor.listenTCP(0, ServeSite(FixedAnswers()), interface="127.0.0.1")
    print(port.getHost().port, flush=True)
    reactor.run()
else:
    import uvicorn

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        json.loads(body.decode("utf-8"))
        data = jsonbody.encode(next(answers))
        headers = [(b"content-type", b"application/json; charset=utf-8"), (b"content-length", b"%d" % len(data))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(128)  # connections wait in the backlog until uvicorn takes the socket
    print(listening.getsockname()[1], flush=True)
    config = uvicorn.Config(app, fd=listening.fileno(), http="httptools", loop="asyncio", access_log=False,
                            log_level="warning", lifespan="off")
    uvicorn.Server(config).run()
"""


def user_system_seconds(pid: int) -> tuple[float, float]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def measure(kind: str, answers_json: str, requests: list[bytes]) -> tuple[float, float, float]:
    """Server CPU a request (user, system; microseconds) and requests a second."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, kind], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(answers_json)
        process.stdin.close()
        port = int(process.stdout.readline())
        asyncio.run(send_all(port, requests[:2000], 16))  # warm-up
        user0, system0 = user_system_seconds(process.pid)
        started = time.perf_counter()
        _, statuses = asyncio.run(send_all(port, requests, 16))
        elapsed = time.perf_counter() - started
        user1, system1 = user_system_seconds(process.pid)
    finally:
        process.kill()
        process.wait()
    if set(statuses) != {200}:
        raise SystemExit(f"{kind}: answers other than 200: {sorted(set(statuses))}")
    count = len(requests)
    return (user1 - user0) / count * 1e6, (system1 - system0) / count * 1e6, count / elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_option(parser)
    parser.add_argument("--requests", type=int, default=10000, help="requests timed for each front end, each round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    import json

    fillers = FillerTexts(sentence_pool(load_articles(args.data)), seed=1998, chars=(1500, 1501))
    stored, checked = fillers.chunk(0, 2)
    similar = {
        "key": "entry-12",
        "similarity": 0.8352,
        "jaccard": 0.717,
        "duplicate": True,
        "similar_id": 13,
        "text": stored,
        "passages": [{"text": [i * 100, i * 100 + 80], "entry": [i * 100 + 3, i * 100 + 83]} for i in range(12)],
        "shared_chars": 960,
    }
    answers = [
        {"verdict": "duplicate", "chars": len(checked), "duplicate_of": "entry-12", "similar": [similar]},
        {"verdict": "unique", "chars": len(checked), "duplicate_of": None, "similar": []},
    ]
    requests = [request_bytes("POST", "/check", {"text": checked})] * args.requests
    kinds = ["twisted", "twisted-stdlib-json"]
    try:
        import uvicorn  # noqa: F401

        kinds.append("uvicorn-httptools")
    except ImportError:
        print("(uvicorn is not installed: the service's own front end only)")
    figures: dict[str, list[tuple[float, float, float]]] = {kind: [] for kind in kinds}
    print(f"## HTTP front ends: {args.requests:,} POST /check a round, 16 clients, load before {load_average()}\n")
    for _ in range(args.rounds):
        for kind in kinds:
            figures[kind].append(measure(kind, json.dumps(answers, ensure_ascii=False), requests))
    print("| front end | server CPU a request, each round (user + system, µs) | requests/s |")
    print("|---|---|---|")
    for kind, rows in figures.items():
        cpu = ", ".join(f"{user + system:.0f} ({user:.0f} + {system:.0f})" for user, system, _ in rows)
        rates = ", ".join(f"{rate:,.0f}" for _, _, rate in rows)
        print(f"| {kind} | {cpu} | {rates} |")
    print(f"\nload after: {load_average()}")


if __name__ == "__main__":
    main()
