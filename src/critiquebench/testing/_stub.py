"""An OpenAI-compatible chat server on 127.0.0.1 that answers from a function.

It records every request body it answered, so tests can prove that a call was
(or was not) sent twice, and it can add latency to model a remote API.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from critiquebench.suites import Case

Responder = Callable[[list[dict[str, str]]], str]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stub: StubModelServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw)
        stub = self.server.stub
        text = stub.responder(body["messages"])
        if stub.latency_s:
            time.sleep(stub.latency_s)
        words_in = sum(len(m["content"].split()) for m in body["messages"])
        reply = {
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": words_in, "completion_tokens": len(text.split())},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        stub.record(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class StubModelServer:
    """``with StubModelServer(responder) as stub: ... stub.url ... stub.requests``."""

    def __init__(self, responder: Responder, *, latency_s: float = 0.0) -> None:
        self.responder = responder
        self.latency_s = latency_s
        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.01,))

    @property
    def url(self) -> str:
        """Base URL for ``--model openai:MODEL@URL``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def record(self, raw: bytes) -> None:
        """Count an answered request by its body's hash (after the reply was sent)."""
        with self._lock:
            self.requests[hashlib.sha256(raw).hexdigest()] += 1

    def __enter__(self) -> StubModelServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def solver_responder(cases: Sequence[Case]) -> Responder:
    """A first draft that is hollow, then the case's reference solution on any fix round.

    Cases are recognised by their prompt text inside the last user message.
    """

    def respond(messages: list[dict[str, str]]) -> str:
        content = messages[-1]["content"]
        case = next((c for c in cases if c.prompt.strip() in content), None)
        if case is None:
            return "I do not know this task."
        if "Your previous answer" in content:
            return f"```python\n{case.reference_solution}\n```"
        return f"```python\ndef {case.entry_point}(*args):\n    return None\n```"

    return respond
