"""A loopback HTTP server that answers from a queue, for provider tests."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    """One scripted answer: a dict body is sent as JSON, a str as it is."""

    status: int = 200
    body: dict[str, Any] | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Seen:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeServer:
    """Replies in order; rejects requests off ``route`` (404) or lacking ``header`` (403)."""

    url: str = ""
    replies: list[Reply] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    route: str = r"/.*"
    header: tuple[str, str] | None = None
    release: threading.Event = field(default_factory=threading.Event)

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def answer(self, seen: Seen) -> Reply:
        self.seen.append(seen)
        if not re.fullmatch(self.route, seen.path):
            return Reply(404, {"error": {"code": 404, "message": f"no route {seen.path}"}})
        if self.header and seen.headers.get(self.header[0]) != self.header[1]:
            error = {"code": 403, "message": "API key not valid", "status": "PERMISSION_DENIED"}
            return Reply(403, {"error": error})
        if not self.replies:
            return Reply(500, {"error": {"code": 500, "message": "no reply queued"}})
        return self.replies.pop(0)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        headers = {key.lower(): value for key, value in self.headers.items()}
        reply = self.server.fake.answer(Seen(self.path, headers, body))
        if reply.delay_s:
            # Waits on an event so the fixture can end a slow reply at teardown.
            self.server.fake.release.wait(reply.delay_s)
        data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
        try:
            self.send_response(reply.status)
            for name, value in {"Content-Type": "application/json", **reply.headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data.encode())))
            self.end_headers()
            self.wfile.write(data.encode())
        except OSError:  # the client gave up (timeout test): nothing to answer
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output quiet


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    """A started server on 127.0.0.1 with a free port; stopped whatever the test does."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)  # loopback traffic must not go to a proxy
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = FakeServer(url=f"http://127.0.0.1:{server.server_address[1]}")
    # A short poll interval keeps shutdown() (which waits for the next poll) fast.
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield server.fake
    finally:
        server.fake.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL on which nothing listens, so connecting is refused."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
