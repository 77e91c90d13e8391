"""A call cache every worker of a cluster shares: content-addressed objects in a store.

The SQLite cache (``_cache.CallCache``) lives on one machine's disk; workers on
other machines would each pay for the same call. This cache keeps one object per
cache key under a folder any fsspec URL names (``s3://bucket/cache``), so every
worker that can reach the result store can reach it too:

    <root>/calls/<key[:2]>/<key>.json    the completion, written once (one PUT)
    <root>/claims/<key>                  who is making the call right now

"Never pay twice" across workers: before calling the model, a worker creates the
key's claim with an exclusive create (``O_EXCL`` on a disk, ``If-None-Match: *`` on
S3). Only one worker succeeds; the others wait for the completion to appear. A
claim whose worker died (older than ``stale_after_s``) is taken over, and a claim
whose call failed is withdrawn at once, so waiting never outlives a dead worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import dataclass

from upath import UPath

from critiquebench.models._provider import Completion

STALE_AFTER_S = 900.0
"""A claim older than this belongs to a worker that died mid-call: longer than any
model call with its retries takes."""


@dataclass(frozen=True)
class _Entry:
    model: str
    text: str
    tokens_in: int
    tokens_out: int
    latency_s: float
    schema_mismatch: bool


class SharedCallCache:
    """Completed calls as one object per key under ``root`` (an fsspec ``UPath``), safe
    for any number of processes on any number of machines."""

    def __init__(
        self, root: UPath, *, stale_after_s: float = STALE_AFTER_S, poll_s: float = 0.05
    ) -> None:
        self.root = root
        self.stale_after_s = stale_after_s
        self.poll_s = poll_s

    def _entry_path(self, key: str) -> UPath:
        return self.root / "calls" / key[:2] / f"{key}.json"

    def _claim_path(self, key: str) -> UPath:
        return self.root / "claims" / key

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key``, marked as a cache hit, or None."""
        started = time.perf_counter()
        try:
            data = json.loads(self._entry_path(key).read_bytes())
        except FileNotFoundError:
            return None
        entry = _Entry(**data)
        return Completion(
            text=entry.text,
            tokens_in=0,
            tokens_out=0,
            latency_s=time.perf_counter() - started,
            model=entry.model,
            schema_mismatch=entry.schema_mismatch,
            cached=True,
            original_tokens_in=entry.tokens_in,
            original_tokens_out=entry.tokens_out,
            original_latency_s=entry.latency_s,
        )

    def put(self, key: str, completion: Completion) -> None:
        """Store a fresh completion: one write of the whole object, so a reader sees
        all of it or nothing."""
        entry = _Entry(
            model=completion.model,
            text=completion.text,
            tokens_in=completion.tokens_in,
            tokens_out=completion.tokens_out,
            latency_s=completion.latency_s,
            schema_mismatch=completion.schema_mismatch,
        )
        path = self._entry_path(key)
        path.fs.pipe_file(path.path, json.dumps(entry.__dict__).encode("utf-8"))

    def claim(self, key: str) -> Completion | None:
        """Make this caller the one that calls the model for ``key`` (returns None), or
        wait until whoever holds the claim has stored the completion (returns it)."""
        path = self._claim_path(key)
        while True:
            if self._create(path):
                hit = self.get(key)  # stored between our look and the claim
                if hit is not None:
                    self.release(key)
                return hit
            hit = self.get(key)
            if hit is not None:
                return hit
            if self._stale(path):
                self.release(key)
                continue
            time.sleep(self.poll_s)

    def release(self, key: str) -> None:
        """Withdraw the claim on ``key`` (its completion is stored, or the call failed)."""
        path = self._claim_path(key)
        with contextlib.suppress(FileNotFoundError):
            path.fs.rm_file(path.path)

    def _create(self, path: UPath) -> bool:
        owner = f"{socket.gethostname()} {os.getpid()} {time.time()}".encode()
        try:
            with path.fs.open(path.path, "xb") as handle:
                handle.write(owner)
        except FileExistsError:
            return False
        except FileNotFoundError:  # a local folder not made yet
            path.fs.makedirs(str(path.parent.path), exist_ok=True)
            return self._create(path)
        return True

    def _stale(self, path: UPath) -> bool:
        try:
            text = path.read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            return False  # released meanwhile: the next round claims or reads it
        try:
            since = float(text.rsplit(" ", 1)[-1])
        except ValueError:
            return True  # not a claim this code wrote
        return time.time() - since > self.stale_after_s

    def __len__(self) -> int:
        calls = self.root / "calls"
        return len(calls.fs.glob(f"{calls.path}/*/*.json"))
