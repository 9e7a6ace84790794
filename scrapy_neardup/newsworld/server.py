"""Serve a news world over HTTP from memory, on 127.0.0.1 by default."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .world import World


def make_handler(world: World, delay: float = 0.0) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``world``; ``delay`` seconds imitate a remote server."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as Scrapy's HTTP/1.1 client expects
        disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms delayed-ACK stalls
        server_version = "newsworld/1.0"

        def do_GET(self) -> None:
            if delay:
                time.sleep(delay)
            path = self.path
            if path not in world.pages and "?" not in path and not path.endswith("/") and path + "/" in world.pages:
                path += "/"
            if path not in world.pages:
                body = b"<html><body><h1>404 Not Found</h1></body></html>"
                self.send_response(404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
            else:
                body = world.body(path)
                self.send_response(200)
                self.send_header("Content-Type", world.content_type(path))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet: a crawl makes thousands of requests

    return Handler


def serve(world: World, host: str = "127.0.0.1", port: int = 0, delay: float = 0.0) -> tuple[ThreadingHTTPServer, str]:
    """Start serving ``world`` in a daemon thread; returns the server and its base URL.

    Stop it with ``server.shutdown(); server.server_close()``.
    """
    server = ThreadingHTTPServer((host, port), make_handler(world, delay))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="newsworld", daemon=True)
    thread.start()
    bound_host, bound_port = server.server_address[:2]
    return server, f"http://{host_name(bound_host)}:{bound_port}/"


def host_name(host: str | bytes | bytearray) -> str:
    """A bound address as text (the socket module types it as bytes too)."""
    return host if isinstance(host, str) else bytes(host).decode()
