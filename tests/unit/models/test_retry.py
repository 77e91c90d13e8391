"""The retry policy on its own: delays, Retry-After parsing, classification."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from critiquebench.models import ModelError, QuotaExhaustedError, RetryPolicy
from critiquebench.models._retry import (
    Failure,
    is_daily_quota,
    is_retryable,
    parse_retry_after,
    retry_info_delay,
)

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7", 7.0),
        (" 1.5 ", 1.5),
        ("-3", 0.0),
        ("Sun, 01 Jun 2025 12:00:30 GMT", 30.0),
        ("Sun, 01 Jun 2025 11:00:00 GMT", 0.0),  # already past
        ("soon", None),
        ("nan", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == expected


def test_full_jitter_grows_then_caps() -> None:
    policy = RetryPolicy(base_s=1, cap_s=5, random=lambda: 1.0)
    assert [policy.delay(n) for n in (1, 2, 3, 4, 5)] == [1, 2, 4, 5, 5]
    assert RetryPolicy(random=lambda: 0.0).delay(3) == 0.0


def test_server_wait_wins_but_is_bounded() -> None:
    policy = RetryPolicy(max_retry_after_s=60, random=lambda: 1.0)
    assert policy.delay(1, retry_after_s=30) == 30
    assert policy.delay(1, retry_after_s=86_400) == 60


def test_retry_info_delay_is_found_anywhere_in_the_body() -> None:
    body = {
        "error": {
            "details": [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "41.5s"}
            ]
        }
    }
    assert retry_info_delay(body) == 41.5
    assert retry_info_delay({"error": {"details": []}}) is None


@pytest.mark.parametrize(
    ("quota_id", "daily"),
    [
        ("GenerateRequestsPerDayPerProjectPerModel-FreeTier", True),
        ("GenerateContentInputTokensPerModelPerDay", True),
        ("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", False),
    ],
)
def test_daily_quota_is_read_from_quota_failure(quota_id: str, daily: bool) -> None:
    violation = {"quotaId": quota_id, "quotaMetric": "generate_content_requests"}
    details = {
        "error": {
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]}
            ]
        }
    }
    failure = Failure(message="Resource has been exhausted", status=429, details=details)
    assert is_daily_quota(failure) is daily


@pytest.mark.parametrize(
    ("failure", "retryable"),
    [
        (Failure(message="", status=429), True),
        (Failure(message="", status=500), True),
        (Failure(message="", status=504), True),
        (Failure(message="", status=400), False),
        (Failure(message="", status=404), False),
        (Failure(message="", transient=True), True),
        (Failure(message=""), False),
    ],
)
def test_what_is_retryable(failure: Failure, retryable: bool) -> None:
    assert is_retryable(failure) is retryable


def test_unclassified_exceptions_propagate_unchanged() -> None:
    def broken() -> None:
        raise KeyError("a bug, not a failed call")

    with pytest.raises(KeyError):
        RetryPolicy(sleep=lambda _: None).call(broken, lambda exc: None, "m")


def test_call_retries_then_returns() -> None:
    outcomes: list[Exception | str] = [OSError("down"), OSError("down"), "ok"]
    sleeps: list[float] = []

    def flaky() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    policy = RetryPolicy(sleep=sleeps.append, random=lambda: 0.5)
    assert policy.call(flaky, lambda exc: Failure(message="down", transient=True), "m") == "ok"
    assert sleeps == [0.5, 1.0]


def test_quota_error_is_a_model_error() -> None:
    def limited() -> None:
        raise OSError

    failure = Failure(message="tokens per day", status=429)
    with pytest.raises(ModelError, match="daily quota exhausted for m; resumes tomorrow"):
        RetryPolicy(sleep=lambda _: None).call(limited, lambda exc: failure, "m")
    assert issubclass(QuotaExhaustedError, ModelError)


def test_max_attempts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def test_each_retry_is_logged_with_its_reason_and_wait(caplog: pytest.LogCaptureFixture) -> None:
    outcomes: list[Exception | str] = [OSError("down"), OSError("down"), "ok"]

    def flaky() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    failure = Failure(message="503 UNAVAILABLE: overloaded", status=503)
    policy = RetryPolicy(max_attempts=4, sleep=lambda _: None, random=lambda: 0.5)
    with caplog.at_level(logging.WARNING, logger="critiquebench.models._retry"):
        assert policy.call(flaky, lambda exc: failure, "gemini:x") == "ok"
    assert [record.getMessage() for record in caplog.records] == [
        "gemini:x: 503 UNAVAILABLE: overloaded; retrying in 0.5 s (attempt 2 of 4)",
        "gemini:x: 503 UNAVAILABLE: overloaded; retrying in 1.0 s (attempt 3 of 4)",
    ]


def test_giving_up_keeps_the_provider_error_as_the_cause() -> None:
    original = OSError("connection reset")

    def broken() -> None:
        raise original

    policy = RetryPolicy(max_attempts=2, sleep=lambda _: None, random=lambda: 0.0)
    with pytest.raises(ModelError, match="m: gave up after 2 attempts: reset") as caught:
        policy.call(broken, lambda exc: Failure(message="reset", transient=True), "m")
    assert caught.value.__cause__ is original
