"""``neardup serve`` as a real process on a free 127.0.0.1 port, and a small JSON client for it."""

from __future__ import annotations

import atexit
import functools
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from urllib.parse import quote

from support import warm_python

LISTENING = re.compile(r"neardup serve: http://127\.0\.0\.1:(\d+)/")


@dataclass
class Answer:
    status: int
    body: dict
    headers: dict = field(default_factory=dict)
    raw: bytes = b""


@dataclass
class Service:
    process: subprocess.Popen
    port: int
    log_path: str
    token: str | None = None

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        *,
        raw: bytes | None = None,
        token: str | None = None,
        headers: dict | None = None,
    ) -> Answer:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        sent = dict(headers or {})
        given = token if token is not None else self.token
        if given:
            sent["Authorization"] = f"Bearer {given}"
        data = raw if raw is not None else None if body is None else json.dumps(body, ensure_ascii=False).encode()
        if data is not None:
            sent["Content-Type"] = "application/json"
        try:
            connection.request(method, path, body=data, headers=sent)
            response = connection.getresponse()
            payload = response.read()
            kind = response.getheader("content-type", "")
            parsed = json.loads(payload) if kind.startswith("application/json") else {}
            return Answer(response.status, parsed, {k.lower(): v for k, v in response.getheaders()}, payload)
        finally:
            connection.close()

    def check(self, text: str, **fields) -> Answer:
        return self.request("POST", "/check", {"text": text, **fields})

    def add(self, key: str, text: str, **fields) -> Answer:
        return self.request("POST", "/entries", {"key": key, "text": text, **fields})

    def entry(self, key: str) -> Answer:
        return self.request("GET", "/entries/" + quote(key, safe=""))

    def log(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, then the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            raise

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@functools.cache
def _log_folder() -> str:
    """One folder for this process's service logs, removed when the process ends."""
    folder = tempfile.mkdtemp(prefix="neardup-serve-tests-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def start_service(store: str, *options: str, token_env: str | None = None, timeout: float = 60) -> Service:
    """Start ``neardup serve --store STORE --port 0 OPTIONS`` and wait for its listening line."""
    handle, log_path = tempfile.mkstemp(prefix="neardup-serve-", suffix=".log", dir=_log_folder())
    environment = {k: v for k, v in os.environ.items() if k != "NEARDUP_SERVE_TOKEN"}
    if token_env is not None:
        environment["NEARDUP_SERVE_TOKEN"] = token_env
    command = [sys.executable, "-m", "scrapy_neardup", "serve", "--store", store, "--port", "0", *options]
    process = warm_python.popen(command, stdout=handle, stderr=subprocess.STDOUT, env=environment)
    os.close(handle)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(log_path, encoding="utf-8", errors="replace") as log:
            found = LISTENING.search(log.read())
        if found:
            token = None
            if "--token" in options:
                token = options[options.index("--token") + 1]
            return Service(process, int(found.group(1)), log_path, token or token_env)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    with open(log_path, encoding="utf-8", errors="replace") as log:
        raise RuntimeError(f"neardup serve did not start (exit {process.poll()}):\n{log.read()[-3000:]}")
