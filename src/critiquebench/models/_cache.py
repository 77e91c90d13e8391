"""A persistent call cache, so an interrupted or repeated run never pays twice.

Keys cover the model, the messages, the generation parameters, the schema and
the rep number: two reps of the same prompt stay independent samples, while a
restarted run (or a second arm sending the very same first-draft prompt) is
answered from disk. SQLite in WAL mode makes it safe for concurrent threads and
processes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelProvider,
)
from critiquebench.models._shared_cache import SharedCallCache

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    schema_mismatch INTEGER NOT NULL,
    created_at REAL NOT NULL
)
"""


def cache_key(
    model: str,
    messages: Sequence[Message],
    params: GenerationParams,
    schema: dict[str, Any] | None,
    rep: int,
) -> str:
    """A stable hash of everything that determines a call's answer."""
    material = {
        "model": model,
        "messages": [asdict(message) for message in messages],
        "params": asdict(params),
        "schema": schema,
        "rep": rep,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


class CallCache:
    """Completed calls stored in one SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connection() as connection:
            connection.execute(_SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        # One connection per thread: sqlite3 connections must not cross threads.
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            self._local.connection = connection
        return connection

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key``, marked as a cache hit, or None."""
        started = time.perf_counter()
        row = (
            self._connection()
            .execute(
                "SELECT model, text, tokens_in, tokens_out, latency_s, schema_mismatch "
                "FROM calls WHERE key = ?",
                (key,),
            )
            .fetchone()
        )
        if row is None:
            return None
        model, text, tokens_in, tokens_out, latency_s, mismatch = row
        return Completion(
            text=text,
            tokens_in=0,
            tokens_out=0,
            latency_s=time.perf_counter() - started,
            model=model,
            schema_mismatch=bool(mismatch),
            cached=True,
            original_tokens_in=tokens_in,
            original_tokens_out=tokens_out,
            original_latency_s=latency_s,
        )

    def put(self, key: str, completion: Completion) -> None:
        """Store a fresh completion (a cache hit is never stored again)."""
        self._connection().execute(
            "INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                completion.model,
                completion.text,
                completion.tokens_in,
                completion.tokens_out,
                completion.latency_s,
                int(completion.schema_mismatch),
                time.time(),
            ),
        )

    def __len__(self) -> int:
        row = self._connection().execute("SELECT count(*) FROM calls").fetchone()
        return int(row[0])


@dataclasses.dataclass
class _Flight:
    """One call being made: its callers wait their turn on ``lock``, the first asks the
    model and the others find its answer in the cache."""

    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    callers: int = 0
    """Callers holding or waiting for ``lock``; guarded by the provider's ``_guard``."""


class CachingProvider:
    """Wraps a provider so every call goes through a :class:`CallCache` (one machine)
    or a :class:`SharedCallCache` (every worker of a cluster)."""

    def __init__(self, inner: ModelProvider, cache: CallCache | SharedCallCache) -> None:
        self.inner = inner
        self.cache = cache
        self._guard = threading.Lock()
        self._in_flight: dict[str, _Flight] = {}
        """The calls being made now, by key: an entry leaves with its last caller, so
        the map holds the calls under way, not one lock for every call the run made."""

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        rep = context.rep if context else 0
        key = cache_key(self.inner.model_name, messages, params, schema, rep)
        # Single flight: arms A and B send the very same first-draft request at the
        # same moment; the second waits for the first and is then a cache hit.
        started = time.perf_counter()
        with self._guard:
            flight = self._in_flight.setdefault(key, _Flight())
            flight.callers += 1
        try:
            with flight.lock:
                return self._complete_once(key, started, messages, params, schema, context)
        finally:
            with self._guard:
                flight.callers -= 1
                if not flight.callers:
                    del self._in_flight[key]

    def _complete_once(
        self,
        key: str,
        started: float,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None,
        context: CallContext | None,
    ) -> Completion:
        """The call of ``key``, made (or found in the cache) by its flight's one caller."""
        hit = self.cache.get(key)
        if hit is None and isinstance(self.cache, SharedCallCache):
            # Other processes, on other machines, may be making this very call:
            # one of them calls the model, the others wait for its answer.
            hit = self.cache.claim(key)
            if hit is None:
                return self._call_claimed(self.cache, key, messages, params, schema, context)
        if hit is not None:
            # The hit's own latency includes waiting for the first caller, so a
            # unit's reported latency swaps the whole wait for the original latency.
            return dataclasses.replace(hit, latency_s=time.perf_counter() - started)
        completion = self.inner.complete(messages, params, schema, context)
        self.cache.put(key, completion)
        return completion

    def _call_claimed(
        self,
        cache: SharedCallCache,
        key: str,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None,
        context: CallContext | None,
    ) -> Completion:
        try:
            completion = self.inner.complete(messages, params, schema, context)
            cache.put(key, completion)
        finally:
            cache.release(key)  # stored, or failed: a waiter then makes the call itself
        return completion
