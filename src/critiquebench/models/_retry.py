"""Retry policy for HTTP model providers: backoff with full jitter, Retry-After, quota rules."""

from __future__ import annotations

import logging
import math
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import tenacity

from critiquebench.models._provider import ModelError

T = TypeVar("T")
_log = logging.getLogger(__name__)

# Quota ids read like "GenerateRequestsPerDayPerProjectPerModel-FreeTier"; other servers
# write "tokens per day (TPD)" in the message.
_PER_DAY = re.compile(r"per[\s_-]?day", re.IGNORECASE)


class QuotaExhaustedError(ModelError):
    """A per-day quota is used up: retrying today cannot help."""


@dataclass(frozen=True, kw_only=True)
class Failure:
    """What one failed attempt tells the policy; built by each provider from its errors."""

    message: str
    """Why it failed, safe to log (never holds a credential)."""
    status: int | None = None
    """HTTP status, or None when no response arrived."""
    transient: bool = False
    """A connection error or timeout: worth another attempt."""
    retry_after_s: float | None = None
    """The server's own wait hint (Retry-After header or google.rpc.RetryInfo)."""
    details: Any = None
    """The parsed error body, searched for per-day quota violations."""


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """Retry 429, 5xx, connection errors and timeouts; fail fast on everything else."""

    base_s: float = 1.0
    """First backoff ceiling; it doubles per attempt."""
    cap_s: float = 60.0
    """Largest backoff ceiling."""
    max_attempts: int = 5
    """Attempts in all, including the first."""
    max_retry_after_s: float = 600.0
    """Longest server-requested wait honoured; a longer one is shortened to this."""
    sleep: Callable[[float], None] = time.sleep
    random: Callable[[], float] = random.random

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")

    def delay(self, attempt: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        if retry_after_s is not None:
            return min(retry_after_s, self.max_retry_after_s)
        # Full jitter: uniform in [0, ceiling], so concurrent workers do not retry in step.
        return self.random() * min(self.cap_s, self.base_s * 2.0 ** (attempt - 1))

    def call(
        self, fn: Callable[[], T], classify: Callable[[Exception], Failure | None], model: str
    ) -> T:
        """Run ``fn`` until it succeeds or the policy gives up with a :class:`ModelError`.

        ``classify`` turns a provider's exception into a :class:`Failure`; exceptions it
        returns None for are not the provider's to handle and propagate unchanged.
        The loop is tenacity's; what is retried and how long to wait is this policy's.
        """

        def attempt() -> T:
            try:
                return fn()
            except Exception as exc:
                failure = classify(exc)
                if failure is None:
                    raise
                if failure.status == 429 and is_daily_quota(failure):
                    raise QuotaExhaustedError(
                        f"daily quota exhausted for {model}; resumes tomorrow ({failure.message})"
                    ) from exc
                if not is_retryable(failure):
                    raise ModelError(f"{model}: {failure.message}") from exc
                raise _Retryable(failure) from exc

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=tenacity.retry_if_exception_type(_Retryable),
            sleep=self.sleep,
            before_sleep=lambda state: self._log_retry(state, model),
            reraise=True,
        )
        try:
            return retrying(attempt)
        except _Retryable as last:
            raise ModelError(
                f"{model}: gave up after {self.max_attempts} attempts: {last.failure.message}"
            ) from last.__cause__

    def _log_retry(self, state: tenacity.RetryCallState, model: str) -> None:
        """A warning per retry, so a slow run says why it waits (messages hold no key)."""
        error = state.outcome.exception() if state.outcome else None
        reason = error.failure.message if isinstance(error, _Retryable) else "failed"
        wait = state.next_action.sleep if state.next_action else 0.0
        _log.warning(
            "%s: %s; retrying in %.1f s (attempt %d of %d)",
            model, reason, wait, state.attempt_number + 1, self.max_attempts,
        )  # fmt: skip

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """Seconds before the next attempt, from the failure tenacity just saw."""
        error = state.outcome.exception() if state.outcome else None
        hint = error.failure.retry_after_s if isinstance(error, _Retryable) else None
        return self.delay(state.attempt_number, hint)


class _Retryable(Exception):
    """A failure worth another attempt; carries what the provider said about it."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def is_retryable(failure: Failure) -> bool:
    """429 and 5xx responses, connection errors and timeouts."""
    if failure.status is None:
        return failure.transient
    return failure.status == 429 or 500 <= failure.status <= 599


def is_daily_quota(failure: Failure) -> bool:
    """True if a google.rpc.QuotaFailure violation (or the message) names a per-day quota."""
    for node in _dicts(failure.details):
        for violation in node.get("violations") or ():
            if isinstance(violation, dict) and any(
                _PER_DAY.search(str(violation.get(key, ""))) for key in ("quotaId", "quotaMetric")
            ):
                return True
    return bool(_PER_DAY.search(failure.message))


def retry_info_delay(details: Any) -> float | None:
    """The ``retryDelay`` ("41s", "0.5s") of a google.rpc.RetryInfo in an error body."""
    for node in _dicts(details):
        if str(node.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return _seconds(str(node.get("retryDelay", "")).removesuffix("s"))
    return None


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """A Retry-After header value (delta-seconds or HTTP date) as seconds from ``now``."""
    if not value:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000" dates parse naive; RFC 9110 dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def transport_failure(exc: Exception, timeout_s: float) -> Failure | None:
    """A Failure for an httpx (or httpx2, google-genai's default) transport error, else None."""
    for module in _httpx_modules():
        if isinstance(exc, module.TimeoutException):
            return Failure(message=f"no response within {timeout_s:g} s", transient=True)
        if isinstance(exc, module.NetworkError | module.RemoteProtocolError):
            return Failure(message=f"connection failed: {_describe(exc)}", transient=True)
        if isinstance(exc, module.TransportError):  # e.g. an unsupported URL scheme
            return Failure(message=f"request failed: {_describe(exc)}")
    return None


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _httpx_modules() -> list[Any]:
    import httpx

    try:
        import httpx2
    except ImportError:  # older google-genai releases do not depend on it
        return [httpx]
    return [httpx, httpx2]


def _seconds(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return max(0.0, value) if math.isfinite(value) else None


def _dicts(node: Any) -> Iterator[dict[str, Any]]:
    """Every dict nested in a JSON value, depth first."""
    if isinstance(node, dict):
        yield node
        for child in node.values():
            yield from _dicts(child)
    elif isinstance(node, list):
        for item in node:
            yield from _dicts(item)
