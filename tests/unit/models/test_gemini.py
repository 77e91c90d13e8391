"""GeminiProvider through the real google-genai client, against a loopback Gemini API."""

from __future__ import annotations

import time
from typing import Any

import pytest

from critiquebench.models import (
    GeminiProvider,
    GenerationParams,
    Message,
    ModelError,
    QuotaExhaustedError,
    RetryPolicy,
)
from tests.unit.models.conftest import FakeServer, Reply

KEY = "test-key-5ecret"
MESSAGES = [
    Message("system", "You write Python."),
    Message("user", "Write add(a, b)."),
    Message("assistant", "def add(a, b): return a - b"),
    Message("user", "Fix it."),
]
PARAMS = GenerationParams(temperature=0.2, max_tokens=128, seed=7)
EXHAUSTED = "Resource has been exhausted (e.g. check quota)."


def answer(text: str, prompt: int = 11, candidates: int = 5, thoughts: int | None = 3) -> Reply:
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
    if thoughts is not None:
        usage["thoughtsTokenCount"] = thoughts
    candidate = {"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP"}
    return Reply(200, {"candidates": [candidate], "usageMetadata": usage})


def error(code: int, status: str, message: str, details: list[Any] | None = None) -> Reply:
    body = {"code": code, "message": message, "status": status, "details": details or []}
    return Reply(code, {"error": body})


def quota_429(quota_id: str, retry_delay: str | None = None) -> Reply:
    details: list[Any] = [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [
                {
                    "quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                    "quotaId": quota_id,
                    "quotaValue": "250",
                }
            ],
        }
    ]
    if retry_delay is not None:
        details.append(
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}
        )
    return error(429, "RESOURCE_EXHAUSTED", EXHAUSTED, details)


@pytest.fixture
def gemini(fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    """The fake server speaking Gemini: the generateContent route, the key header."""
    for name in (
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_GENAI_API_VERSION",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_ENTERPRISE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    fake_server.route = r"/v1(beta)?/models/[\w.-]+:generateContent"
    fake_server.header = ("x-goog-api-key", KEY)
    return fake_server


def provider(url: str, sleeps: list[float], **kwargs: Any) -> GeminiProvider:
    attempts = kwargs.pop("max_attempts", 4)
    retry = RetryPolicy(max_attempts=attempts, sleep=sleeps.append, random=lambda: 0.5)
    return GeminiProvider(base_url=url, retry=retry, **kwargs)


def test_success_maps_messages_params_and_usage(gemini: FakeServer) -> None:
    gemini.queue(answer("def add(a, b): return a + b", prompt=11, candidates=5, thoughts=3))
    completion = provider(gemini.url, []).complete(MESSAGES, PARAMS)
    assert completion.text == "def add(a, b): return a + b"
    assert (completion.tokens_in, completion.tokens_out) == (11, 5 + 3)
    assert completion.model == "gemini:gemini-2.5-flash" and not completion.schema_mismatch
    (seen,) = gemini.seen
    assert seen.path == "/v1/models/gemini-2.5-flash:generateContent"
    assert seen.body["systemInstruction"]["parts"] == [{"text": "You write Python."}]
    assert [c["role"] for c in seen.body["contents"]] == ["user", "model", "user"]
    assert seen.body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 128, "seed": 7}


def test_missing_thought_count_counts_zero(gemini: FakeServer) -> None:
    gemini.queue(answer("x", candidates=4, thoughts=None))
    assert provider(gemini.url, []).complete(MESSAGES, PARAMS).tokens_out == 4


def test_schema_is_sent_and_text_returned_as_is(gemini: FakeServer) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    gemini.queue(answer('{"ok": true}'), answer("sure! {ok: yes}"))
    gemini_provider = provider(gemini.url, [])
    good = gemini_provider.complete(MESSAGES, PARAMS, schema=schema)
    bad = gemini_provider.complete(MESSAGES, PARAMS, schema=schema)
    assert (good.text, good.schema_mismatch) == ('{"ok": true}', False)
    assert (bad.text, bad.schema_mismatch) == ("sure! {ok: yes}", True)
    config = gemini.seen[0].body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == schema


def test_429_honours_retry_after(gemini: FakeServer) -> None:
    limited = error(429, "RESOURCE_EXHAUSTED", EXHAUSTED)
    limited.headers["Retry-After"] = "7"
    gemini.queue(limited, answer("ok"))
    sleeps: list[float] = []
    assert provider(gemini.url, sleeps).complete(MESSAGES, PARAMS).text == "ok"
    assert sleeps == [7.0] and len(gemini.seen) == 2


def test_503_twice_then_success_backs_off(gemini: FakeServer) -> None:
    unavailable = error(503, "UNAVAILABLE", "The model is overloaded.")
    gemini.queue(unavailable, unavailable, answer("ok"))
    sleeps: list[float] = []
    assert provider(gemini.url, sleeps).complete(MESSAGES, PARAMS).text == "ok"
    assert sleeps == [0.5, 1.0]  # full jitter at 0.5 of ceilings 1 s and 2 s


def test_daily_quota_is_not_retried(gemini: FakeServer) -> None:
    gemini.queue(quota_429("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "30s"))
    sleeps: list[float] = []
    with pytest.raises(QuotaExhaustedError, match=r"daily quota exhausted for gemini:gemini-2\.5"):
        provider(gemini.url, sleeps).complete(MESSAGES, PARAMS)
    assert sleeps == [] and len(gemini.seen) == 1


def test_per_minute_quota_with_same_message_is_retried(gemini: FakeServer) -> None:
    gemini.queue(quota_429("GenerateRequestsPerMinutePerProjectPerModel", "12s"), answer("ok"))
    sleeps: list[float] = []
    assert provider(gemini.url, sleeps).complete(MESSAGES, PARAMS).text == "ok"
    assert sleeps == [12.0]  # google.rpc.RetryInfo, since no Retry-After header came


def test_client_error_is_not_retried(gemini: FakeServer) -> None:
    gemini.queue(error(400, "INVALID_ARGUMENT", "bad schema"))
    sleeps: list[float] = []
    with pytest.raises(ModelError, match="400 INVALID_ARGUMENT: bad schema") as caught:
        provider(gemini.url, sleeps).complete(MESSAGES, PARAMS)
    assert not isinstance(caught.value, QuotaExhaustedError)
    assert sleeps == [] and len(gemini.seen) == 1


def test_retries_stop_at_max_attempts(gemini: FakeServer) -> None:
    gemini.queue(*[error(500, "INTERNAL", "oops")] * 3)
    sleeps: list[float] = []
    with pytest.raises(ModelError, match="gave up after 3 attempts: 500 INTERNAL"):
        provider(gemini.url, sleeps, max_attempts=3).complete(MESSAGES, PARAMS)
    assert len(sleeps) == 2 and len(gemini.seen) == 3


@pytest.mark.parametrize(
    "body", ["<html>502 from a proxy</html>", '{"usageMetadata": {"promptTokenCount": "many"}}']
)
def test_malformed_body_is_a_model_error(gemini: FakeServer, body: str) -> None:
    gemini.queue(Reply(200, body))
    sleeps: list[float] = []
    with pytest.raises(ModelError, match="malformed response"):
        provider(gemini.url, sleeps).complete(MESSAGES, PARAMS)
    assert sleeps == [] and len(gemini.seen) == 1


def test_slow_response_times_out_and_is_retried(gemini: FakeServer) -> None:
    gemini.queue(Reply(200, {}, delay_s=5), Reply(200, {}, delay_s=5))
    sleeps: list[float] = []
    started = time.perf_counter()
    with pytest.raises(ModelError, match=r"gave up after 2 attempts: no response within 0\.2 s"):
        provider(gemini.url, sleeps, max_attempts=2, timeout_s=0.2).complete(MESSAGES, PARAMS)
    assert time.perf_counter() - started < 3 and len(sleeps) == 1


def test_connection_refused_is_retried_then_fails(gemini: FakeServer, closed_port_url: str) -> None:
    sleeps: list[float] = []
    with pytest.raises(ModelError, match="gave up after 3 attempts: connection failed"):
        provider(closed_port_url, sleeps, max_attempts=3).complete(MESSAGES, PARAMS)
    assert len(sleeps) == 2


def test_missing_key_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ModelError, match="set GEMINI_API_KEY"):
        GeminiProvider()


def test_google_api_key_and_base_url_from_environment(
    gemini: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.url)
    gemini.queue(answer("ok"))
    assert GeminiProvider("gemini-2.5-pro").complete(MESSAGES, PARAMS).text == "ok"
    assert gemini.seen[0].path.endswith("/models/gemini-2.5-pro:generateContent")


def test_key_never_appears_in_errors(gemini: FakeServer) -> None:
    gemini.queue(error(400, "INVALID_ARGUMENT", f"API key {KEY} is not valid"))
    with pytest.raises(ModelError) as caught:
        provider(gemini.url, []).complete(MESSAGES, PARAMS)
    assert KEY not in str(caught.value) and "<redacted>" in str(caught.value)


def test_large_seeds_fit_the_api_int32(gemini: FakeServer) -> None:
    gemini.queue(answer("ok"))
    provider(gemini.url, []).complete(MESSAGES, GenerationParams(seed=0xFFFF_FFFF))
    assert 0 <= gemini.seen[0].body["generationConfig"]["seed"] < 2**31


def test_request_body_is_json_carrying_each_message_exactly(gemini: FakeServer) -> None:
    tricky = [
        Message("system", 'Quotes " and \\ backslashes,\nnewlines\tand tabs'),
        Message("user", "Unicode: café, 🙂, a line separator \u2028 and a NUL \x00 byte"),
    ]
    gemini.queue(answer("ok"))
    provider(gemini.url, []).complete(tricky, PARAMS)
    (seen,) = gemini.seen
    assert seen.headers["content-type"].startswith("application/json")
    # The fake server keeps the raw text when the body does not parse as JSON.
    assert isinstance(seen.body, dict), seen.body
    assert seen.body["systemInstruction"]["parts"] == [{"text": tricky[0].content}]
    assert seen.body["contents"] == [{"role": "user", "parts": [{"text": tricky[1].content}]}]


def test_thinking_budget_is_sent_when_set(gemini: FakeServer) -> None:
    gemini.queue(answer("ok"))
    provider(gemini.url, [], thinking_budget=0).complete(MESSAGES, PARAMS)
    thinking = gemini.seen[0].body["generationConfig"]["thinkingConfig"]
    # google-genai 3.3.0 sends this object's keys in snake_case; proto JSON accepts both.
    assert thinking.get("thinkingBudget", thinking.get("thinking_budget")) == 0


def test_vertex_environment_does_not_reroute(
    gemini: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    gemini.queue(answer("ok"))
    assert provider(gemini.url, []).complete(MESSAGES, PARAMS).text == "ok"
