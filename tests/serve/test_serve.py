"""``neardup serve`` as a client meets it: a real process on 127.0.0.1, real stores (memory,
LevelDB, a real redis-server), requests over HTTP."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sys
import time
import unicodedata
from urllib.parse import quote

import pytest
from support import warm_python
from support.corpus import reprint, text
from support.redis_server import start_redis
from support.serve_process import start_service

from scrapy_neardup.serve.service import is_loopback
from scrapy_neardup.stores import open_store


@pytest.fixture
def service(store_uri):
    started = start_service(store_uri, "--log-level", "DEBUG")
    yield started
    started.kill()


def content(value: str) -> str:
    """Letters and digits, width and case folded: what two shared passages have in common."""
    return "".join(char for char in unicodedata.normalize("NFKC", value).lower() if char.isalnum())


def test_check_add_read_and_delete_entries_on_each_store(service):
    assert service.add("library", text("library")).status == 201
    added = service.add("reservoir", text("reservoir"))
    assert added.status == 201 and added.body["added"] and added.body["verdict"] == "unique"
    copy = reprint("library")

    checked = service.check(copy)
    assert checked.status == 200 and checked.body["verdict"] == "duplicate"
    assert checked.body["duplicate_of"] == "library"
    first = checked.body["similar"][0]
    assert first["key"] == "library" and first["duplicate"] and first["similarity"] > 0.7
    assert first["text"] == text("library")
    assert first["passages"] and first["shared_chars"] > 0.8 * len(content(copy)) * 0.7
    for passage in first["passages"]:
        (a, b), (c, d) = passage["text"], passage["entry"]
        assert 0 <= a < b <= len(copy) and 0 <= c < d <= len(first["text"])
        assert content(copy[a:b]) == content(first["text"][c:d])
    assert service.request("GET", "/stats").body["entries"] == 2  # a check writes nothing

    refused = service.add("copy", copy)
    assert refused.status == 409 and not refused.body["added"] and refused.body["duplicate_of"] == "library"
    assert refused.body["similar"][0]["key"] == "library"
    assert service.entry("copy").status == 404

    forced = service.add("copy", copy, force=True)
    assert forced.status == 201 and forced.body["added"] and forced.body["relative_of"] == "library"
    assert forced.body["verdict"] == "unique" and forced.body["duplicate_of"] is None
    stored = service.entry("copy")
    assert stored.status == 200 and stored.body["text"] == copy and stored.body["key"] == "copy"
    listed = service.check(reprint("library", cut=0.9)).body["similar"]
    assert sorted((e["key"], e["duplicate"]) for e in listed) == [("copy", False), ("library", True)]
    assert listed[0]["similarity"] >= listed[1]["similarity"]  # most similar first

    again = service.add("library", text("library"))
    assert again.status == 200 and again.body["verdict"] == "revisit" and not again.body["added"]

    assert service.request("DELETE", "/entries/copy").status == 200
    assert service.entry("copy").status == 404
    assert service.request("DELETE", "/entries/copy").status == 404
    assert service.check(copy).body["similar"][0]["key"] == "library"

    stats = service.request("GET", "/stats").body
    assert stats["entries"] == 2
    assert stats["requests"] == {
        "checks": 3,
        "added": 3,
        "forced": 1,
        "refused": 1,
        "revisits": 1,
        "updated": 0,
        "key_collisions": 0,
        "deleted": 1,
    }
    assert service.request("GET", "/health").body == {"status": "ok"}
    assert service.stop() == 0


def test_bad_requests_get_a_json_error_with_a_clear_message_and_no_traceback():
    service = start_service("memory://", "--max-bytes", "4000", "--log-level", "DEBUG")
    try:
        service.add("library", text("library"))
        cases = [
            (("POST", "/check"), {"raw": b"{bad"}, 400, "not valid JSON"),
            (("POST", "/check"), {"raw": b""}, 400, "no body"),
            (("POST", "/check"), {"raw": b"\xff\xfe{}"}, 400, "not UTF-8"),
            (("POST", "/check"), {"body": [1, 2]}, 400, "JSON object"),
            (("POST", "/check"), {"body": {"txt": "x"}}, 400, '"text"'),
            (("POST", "/check"), {"body": {"text": 5}}, 400, '"text" must be a string'),
            (("POST", "/check"), {"body": {"text": "x", "html": "y"}}, 400, "not both"),
            (("POST", "/check"), {"body": {"text": "x", "limit": 0}}, 400, '"limit"'),
            (("POST", "/entries"), {"body": {"text": text("rice")}}, 400, '"key"'),
            (("POST", "/entries"), {"body": {"key": "", "text": text("rice")}}, 400, '"key"'),
            (("POST", "/entries"), {"body": {"key": "r", "text": text("rice"), "force": "yes"}}, 400, '"force"'),
            (("POST", "/entries"), {"body": {"key": "r", "text": "太短了"}}, 400, "too short"),
            (("POST", "/check"), {"body": {"text": "长" * 3000}}, 413, "more than the 4000"),
            (("GET", "/nowhere"), {}, 404, "no such path"),
            (("GET", "/entries/unknown"), {}, 404, "no entry is stored under the key 'unknown'"),
            (("DELETE", "/entries/unknown"), {}, 404, "no entry"),
            (("PUT", "/check"), {}, 405, "use POST"),
            (("POST", "/stats"), {}, 405, "use GET"),
        ]
        for (method, path), given, status, message in cases:
            answer = service.request(method, path, **given)
            assert answer.status == status, (method, path, given, answer)
            assert message in answer.body["error"], (answer.body, message)
            assert b"Traceback" not in answer.raw and answer.headers["content-type"].startswith("application/json")
        assert service.request("PUT", "/check").headers["allow"] == "POST"
        short = service.check("太短了，不到五十个字。")
        assert short.status == 200 and short.body["verdict"] == "short" and short.body["similar"] == []
        assert service.entry("library").status == 200  # the service goes on after every error
        requests = len(cases) + 3
    finally:
        assert service.stop() == 0
    lines = re.findall(r"DEBUG scrapy_neardup\.serve\.http: (\w+) (\S+) (\d{3}) [\d.]+ ms \d+ bytes", service.log())
    assert len(lines) == requests + 1  # one line per request (and the first add)
    assert ("PUT", "/check", "405") in lines and ("GET", "/nowhere", "404") in lines
    assert "Traceback" not in service.log()


def test_keys_of_any_characters_and_html_entries():
    service = start_service("memory://")
    try:
        key = "https://例子.cn/文章/1?page=2&x=%41"
        assert service.add(key, text("marathon")).status == 201
        found = service.request("GET", "/entries/" + quote(key, safe=""))
        assert found.status == 200 and found.body["key"] == key
        page = (
            "<html><body><article>"
            + "".join(f"<p>{p}</p>" for p in text("marathon").split("\n"))
            + "</article></body></html>"
        )
        checked = service.request("POST", "/check", {"html": page})
        assert checked.status == 200 and checked.body["duplicate_of"] == key
        extracted = checked.body["text"]
        for passage in checked.body["similar"][0]["passages"]:
            start, end = passage["text"]
            assert content(extracted[start:end])
        assert service.request("DELETE", "/entries/" + quote(key, safe="")).status == 200
        # A key holding a lone surrogate (JSON lets a client send the escape): its answer is
        # written with the escape, not lost.
        odd = json.dumps({"key": "odd-\ud800", "text": text("battery")}).encode("ascii")
        added = service.request("POST", "/entries", raw=odd)
        assert added.status == 201 and added.body["key"] == "odd-\ud800"
    finally:
        assert service.stop() == 0


def test_a_token_is_required_when_set_and_the_page_asks_for_it():
    service = start_service("memory://", token_env="s3cret-token")
    try:
        assert service.request("POST", "/check", {"text": text("rice")}, token="").status == 401
        wrong = service.request("GET", "/stats", token="guess")
        assert wrong.status == 401 and "Authorization: Bearer" in wrong.body["error"]
        assert wrong.headers["www-authenticate"].startswith("Bearer")
        assert service.request("GET", "/stats").status == 200
        assert service.request("GET", "/health", token="").status == 200  # probes need no token
        page = service.request("GET", "/", token="")
        assert page.status == 200 and b'data-auth="1"' in page.raw
    finally:
        assert service.stop() == 0
    cli = start_service("memory://", "--token", "other")
    try:
        assert cli.request("GET", "/stats", token="").status == 401 and cli.request("GET", "/stats").status == 200
    finally:
        assert cli.stop() == 0


def test_without_a_token_it_refuses_to_listen_beyond_loopback():
    done = warm_python.run(
        [sys.executable, "-m", "scrapy_neardup", "serve", "--store", "memory://", "--host", "0.0.0.0", "--port", "0"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "NEARDUP_SERVE_TOKEN"},
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 without a token" in done.stderr and "NEARDUP_SERVE_TOKEN" in done.stderr
    assert [
        is_loopback(h)
        for h in ("127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost", "0.0.0.0", "10.0.0.1", "example.com")
    ] == [True, True, True, True, True, False, False, False]


def test_without_httptools_it_says_which_extra_to_install():
    code = (
        "import sys; sys.modules['httptools'] = None\n"  # as if the extra serve were not installed
        "from scrapy_neardup.cli import main\n"
        "sys.exit(main(['serve', '--store', 'memory://', '--port', '0']))"
    )
    done = warm_python.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "needs httptools" in done.stderr and "[serve]" in done.stderr
    assert "Traceback" not in done.stderr


def test_sigterm_answers_the_request_in_flight_then_closes_the_store(tmp_path):
    uri = f"leveldb://{tmp_path}/store"
    service = start_service(uri)
    body = json.dumps({"key": "in-flight", "text": text("rice")}, ensure_ascii=False).encode()
    head = f"POST /entries HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", service.port), timeout=30) as client:
        client.sendall(head.encode() + body[:100])
        time.sleep(0.5)  # the service has the headers: a request in flight
        service.process.send_signal(signal.SIGTERM)
        time.sleep(1.0)
        assert service.process.poll() is None, "the service stopped before answering"
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", service.port), timeout=5).close()  # no longer listening
        client.sendall(body[100:])
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = client.recv(65536)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 201"), answer[:200]
    assert service.process.wait(20) == 0
    assert "closed" in service.log().splitlines()[-2] + service.log().splitlines()[-1]
    with open_store(uri) as store:  # the lock was released, and the entry is there
        assert [record.key for record in store.stored_under("in-flight")] == ["in-flight"]


def test_a_store_that_goes_down_gives_503_and_the_service_goes_on():
    redis = start_redis()
    try:
        service = start_service(redis.url())
        try:
            assert service.add("library", text("library")).status == 201
            redis.kill()
            for answer in (
                service.check(reprint("library")),
                service.request("GET", "/health"),
                service.add("rice", text("rice")),
                service.entry("library"),
            ):
                assert answer.status == 503 and "store is unavailable" in answer.body["error"], answer
                assert b"Traceback" not in answer.raw
            assert service.process.poll() is None
            assert service.request("GET", "/").status == 200
        finally:
            assert service.stop() == 0
    finally:
        redis.stop()


def test_two_services_on_one_redis_store_keep_one_of_two_copies_added_at_once(redis_url):
    """Check-and-add is one atomic step of the store: editors adding copies of one entry through
    two services at the same moment keep exactly one, each story once."""
    from concurrent.futures import ThreadPoolExecutor

    first, second = start_service(redis_url), start_service(redis_url)
    try:
        names = ["library", "marathon", "rice", "museum", "reservoir"]
        jobs = [
            (service, f"{name}-{i}", text(name) if i == 0 else reprint(name))
            for name in names
            for i, service in enumerate((first, second, first, second))
        ]
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda job: (job[1], job[0].add(job[1], job[2])), jobs))
        added = sorted(key.split("-")[0] for key, answer in answers if answer.status == 201)
        assert added == sorted(names), answers
        assert all(answer.status in (201, 409) for _, answer in answers)
        assert first.request("GET", "/stats").body["entries"] == len(names)
    finally:
        assert first.stop() == 0 and second.stop() == 0


def _read_answer(client: socket.socket, pending: bytes) -> tuple[int, dict, bytes]:
    """One HTTP answer framed by its Content-Length: (status, JSON body, the bytes after it)."""
    while b"\r\n\r\n" not in pending:
        pending += client.recv(65536)
    head, _, rest = pending.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(rest) < length:
        rest += client.recv(65536)
    return int(head[9:12]), json.loads(rest[:length]), rest[length:]


def test_answers_go_out_in_order_and_a_client_gone_before_its_answer_stalls_none():
    """Requests are answered one a reactor turn, after they are read: two sent at once on one
    connection come back in order, each framed by its Content-Length, and a client that leaves
    before its answer leaves the service answering the others."""
    service = start_service("memory://")
    try:
        assert service.add("order/a", text("rice")).status == 201

        def raw(method: str, path: str, body: object = None) -> bytes:
            data = b"" if body is None else json.dumps(body, ensure_ascii=False).encode()
            head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(data)}\r\n\r\n"
            return head.encode() + data

        check = raw("POST", "/check", {"text": reprint("rice")})
        with socket.create_connection(("127.0.0.1", service.port), timeout=30) as gone:
            gone.sendall(check)  # and leaves at once
        with socket.create_connection(("127.0.0.1", service.port), timeout=30) as client:
            client.sendall(check + raw("GET", "/entries/order%2Fa"))
            status, first, rest = _read_answer(client, b"")
            assert status == 200 and first["duplicate_of"] == "order/a" and first["similar"][0]["passages"]
            status, second, rest = _read_answer(client, rest)
            assert status == 200 and second["key"] == "order/a" and second["text"] == text("rice")
            assert rest == b""
        assert service.request("GET", "/stats").body["requests"]["checks"] in (1, 2)
        assert service.request("GET", "/health").body == {"status": "ok"}
    finally:
        service.kill()


def test_a_title_sent_with_an_entry_names_the_article_a_lead_excerpt_declares(tmp_path):
    """An essay added with its headline; its portal's excerpt, whose 原标题 line names it, is
    its duplicate when checked with a headline of its own; one whose 原标题 names another
    headline is not (the continuity test alone)."""
    from support.samestory_texts import ESSAY_TITLE, essay

    started = start_service(f"leveldb://{tmp_path}/store")
    try:
        assert started.add("essay", essay(), title=ESSAY_TITLE).status == 201
        checked = started.check(essay(2), title="云岭村茶农的好日子")
        assert checked.body["verdict"] == "duplicate" and checked.body["duplicate_of"] == "essay"
        other = started.check(essay(2, title="云岭茶叶卖出好价钱"), title="云岭村茶农的好日子")
        assert other.body["verdict"] != "duplicate"
        assert started.request("POST", "/check", {"text": essay(2), "title": 3}).status == 400
    finally:
        started.kill()


def _workers_of(pid: int) -> list[int]:
    """The fingerprint worker processes of a service: its child processes (Linux /proc)."""
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as children:
        return [int(child) for child in children.read().split()]


def test_checks_fingerprinted_by_a_worker_answer_alike_and_outlive_the_worker():
    """A check's fingerprint made by the worker process gives the answer the service gives
    making it itself (--workers 0); a SIGTERM does not stop the worker (the service stops it);
    a worker killed meanwhile costs no check: the texts it held are fingerprinted by the
    service, and a new worker takes the next ones."""
    with_worker, alone = start_service("memory://"), start_service("memory://", "--workers", "0")
    try:
        for service in (with_worker, alone):
            assert service.add("library", text("library")).status == 201
            assert service.add("rice", text("rice"), title="稻田里的新技术").status == 201
        checks = [
            {"text": reprint("library")},
            {"text": text("marathon")},
            {"text": reprint("rice", cut=0.9), "title": "稻田里的新技术", "limit": 1},
            {"text": "太短了，不到五十个字。"},
        ]
        answers = [with_worker.request("POST", "/check", body).body for body in checks]
        assert answers == [alone.request("POST", "/check", body).body for body in checks]
        assert [a["verdict"] for a in answers] == ["duplicate", "unique", "duplicate", "short"]
        assert _workers_of(alone.process.pid) == []
        (worker,) = _workers_of(with_worker.process.pid)
        os.kill(worker, signal.SIGTERM)  # as systemd sends it to the whole group: the service decides
        time.sleep(0.5)
        assert _workers_of(with_worker.process.pid) == [worker]
        os.kill(worker, signal.SIGKILL)
        assert [with_worker.request("POST", "/check", body).body for body in checks] == answers
        deadline = time.monotonic() + 30
        while _workers_of(with_worker.process.pid) in ([], [worker]) and time.monotonic() < deadline:
            time.sleep(0.1)
        (replaced,) = _workers_of(with_worker.process.pid)
        assert [with_worker.request("POST", "/check", body).body for body in checks] == answers
    finally:
        assert with_worker.stop() == 0 and alone.stop() == 0
    assert "a fingerprint worker stopped" in with_worker.log()
    deadline = time.monotonic() + 10  # the worker leaves with the service
    while os.path.exists(f"/proc/{replaced}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{replaced}")


def _exchange(port: int, data: bytes, until_closed: bool = False) -> bytes:
    """Send ``data`` on a new connection; what came back (until closed, or one answer)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(data)
        if not until_closed:
            status, body, _ = _read_answer(client, b"")
            return b"%d " % status + json.dumps(body).encode()
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
        return answer


def test_http_as_clients_and_proxies_send_it():
    """What the parser takes besides one plain request: a chunked body, a client asking to
    continue before it sends the body, HEAD, HTTP/1.0 (the connection closed after the answer);
    and what it refuses with a JSON error, closing the connection: a head of more than 64 KiB,
    a request that is not HTTP."""
    service = start_service("memory://")
    try:
        assert service.add("library", text("library")).status == 201
        body = json.dumps({"text": reprint("library")}, ensure_ascii=False).encode()
        chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:50], body[50:])) + b"0\r\n\r\n"
        head = b"POST /check HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        assert _exchange(service.port, head + chunked).startswith(b'200 {"verdict": "duplicate"')

        with socket.create_connection(("127.0.0.1", service.port), timeout=30) as client:
            client.sendall(
                b"POST /check HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body)
            )
            assert client.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
            client.sendall(body)
            status, answer, _ = _read_answer(client, b"")
            assert status == 200 and answer["duplicate_of"] == "library"

        page = _exchange(service.port, b"HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", until_closed=True)
        head_of_page, _, rest = page.partition(b"\r\n\r\n")
        assert head_of_page.startswith(b"HTTP/1.1 200 OK") and rest == b""
        assert int(re.search(rb"content-length: (\d+)", head_of_page).group(1)) > 1000

        with socket.create_connection(("127.0.0.1", service.port), timeout=30) as client:
            keys = [f"k{i}" for i in range(20)]  # more than are read ahead: the rest wait in the socket
            client.sendall(b"".join(b"GET /entries/%s HTTP/1.1\r\nHost: x\r\n\r\n" % k.encode() for k in keys))
            pending, answers = b"", []
            for _ in keys:
                status, answer, pending = _read_answer(client, pending)
                answers.append((status, answer["error"].split("'")[1]))
            assert answers == [(404, k) for k in keys]  # each answered, in the order sent

        old = _exchange(service.port, b"GET /health HTTP/1.0\r\n\r\n", until_closed=True)  # closed after it
        assert old.startswith(b"HTTP/1.1 200 OK") and old.endswith(b'{"status":"ok"}')

        huge = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n"
        refused = _exchange(service.port, huge, until_closed=True)
        assert refused.startswith(b"HTTP/1.1 431 ") and b"too large" in refused and b"connection: close" in refused
        garbage = _exchange(service.port, b"HELLO THERE\r\n\r\n", until_closed=True)
        assert garbage.startswith(b"HTTP/1.1 400 ") and b'{"error":"the request is not valid HTTP/1.1' in garbage
        assert service.request("GET", "/health").body == {"status": "ok"}  # the service goes on
    finally:
        assert service.stop() == 0
