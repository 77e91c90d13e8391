"""OpenAICompatibleProvider against a loopback /v1/chat/completions server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from critiquebench.models import (
    GenerationParams,
    Message,
    ModelError,
    OpenAICompatibleProvider,
    QuotaExhaustedError,
    RetryPolicy,
)
from tests.unit.models.conftest import FakeServer, Reply

KEY = "sk-local-5ecret"
MESSAGES = [Message("system", "You write Python."), Message("user", "Write add(a, b).")]
PARAMS = GenerationParams(temperature=0.2, max_tokens=128, seed=7)


def answer(text: str, prompt: int = 9, completion: int = 4) -> Reply:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
    }
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    return Reply(200, {"choices": [choice], "usage": usage})


def error(code: int, message: str, **headers: str) -> Reply:
    return Reply(code, {"error": {"message": message, "type": "error"}}, headers=headers)


@pytest.fixture
def server(fake_server: FakeServer) -> FakeServer:
    fake_server.route = r"/v1/chat/completions"
    fake_server.header = ("authorization", f"Bearer {KEY}")
    return fake_server


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make(sleeps: list[float]) -> Iterator[Any]:
    """Builds providers with a recording sleep, and closes them after the test."""
    built: list[OpenAICompatibleProvider] = []

    def build(url: str, *, attempts: int = 4, **kwargs: Any) -> OpenAICompatibleProvider:
        retry = RetryPolicy(max_attempts=attempts, sleep=sleeps.append, random=lambda: 0.5)
        kwargs.setdefault("api_key", KEY)
        built.append(OpenAICompatibleProvider(url, "qwen2.5-coder:7b", retry=retry, **kwargs))
        return built[-1]

    try:
        yield build
    finally:
        for provider in built:
            provider.close()


def test_success_sends_chat_request_and_reads_usage(server: FakeServer, make: Any) -> None:
    server.queue(answer("def add(a, b): return a + b", prompt=9, completion=4))
    completion = make(server.url).complete(MESSAGES, PARAMS)
    assert completion.text == "def add(a, b): return a + b"
    assert (completion.tokens_in, completion.tokens_out) == (9, 4)
    assert completion.model == "openai:qwen2.5-coder:7b"
    body = server.seen[0].body
    assert body["model"] == "qwen2.5-coder:7b" and "response_format" not in body
    assert body["messages"][0] == {"role": "system", "content": "You write Python."}
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.2, 128, 7)


def test_base_url_with_v1_suffix_is_accepted(server: FakeServer, make: Any) -> None:
    server.queue(answer("ok"))
    assert make(f"{server.url}/v1/").complete(MESSAGES, PARAMS).text == "ok"


def test_schema_goes_out_as_strict_json_schema(server: FakeServer, make: Any) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    server.queue(answer('{"ok": true}'), answer("not json"))
    provider = make(server.url)
    assert not provider.complete(MESSAGES, PARAMS, schema=schema).schema_mismatch
    assert provider.complete(MESSAGES, PARAMS, schema=schema).schema_mismatch
    assert server.seen[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "critic", "schema": schema, "strict": True},
    }


def test_429_honours_retry_after(server: FakeServer, make: Any, sleeps: list[float]) -> None:
    server.queue(error(429, "Rate limit reached: requests per minute", **{"Retry-After": "3"}))
    server.queue(answer("ok"))
    assert make(server.url).complete(MESSAGES, PARAMS).text == "ok"
    assert sleeps == [3.0]


def test_503_twice_then_success(server: FakeServer, make: Any, sleeps: list[float]) -> None:
    server.queue(error(503, "loading model"), error(503, "loading model"), answer("ok"))
    assert make(server.url).complete(MESSAGES, PARAMS).text == "ok"
    assert sleeps == [0.5, 1.0]


def test_daily_limit_is_not_retried(server: FakeServer, make: Any, sleeps: list[float]) -> None:
    server.queue(error(429, "Rate limit reached on tokens per day (TPD): Limit 500000"))
    with pytest.raises(QuotaExhaustedError, match="daily quota exhausted for openai:qwen"):
        make(server.url).complete(MESSAGES, PARAMS)
    assert sleeps == [] and len(server.seen) == 1


def test_ollama_style_string_error_is_reported(server: FakeServer, make: Any) -> None:
    server.queue(Reply(404, {"error": 'model "qwen2.5-coder:7b" not found'}))
    with pytest.raises(ModelError, match=r'404: model "qwen2\.5-coder:7b" not found'):
        make(server.url).complete(MESSAGES, PARAMS)
    assert len(server.seen) == 1


@pytest.mark.parametrize("body", ["<html>oops</html>", '{"choices": []}', '{"choices": [1]}'])
def test_malformed_body_is_not_retried(
    server: FakeServer, make: Any, sleeps: list[float], body: str
) -> None:
    server.queue(Reply(200, body))
    with pytest.raises(ModelError, match="malformed response"):
        make(server.url).complete(MESSAGES, PARAMS)
    assert sleeps == []


def test_slow_response_times_out(server: FakeServer, make: Any, sleeps: list[float]) -> None:
    server.queue(Reply(200, {}, delay_s=5), Reply(200, {}, delay_s=5))
    with pytest.raises(ModelError, match=r"gave up after 2 attempts: no response within 0\.2 s"):
        make(server.url, attempts=2, timeout_s=0.2).complete(MESSAGES, PARAMS)
    assert len(sleeps) == 1


def test_connection_refused(closed_port_url: str, make: Any, sleeps: list[float]) -> None:
    with pytest.raises(ModelError, match="gave up after 3 attempts: connection failed"):
        make(closed_port_url, attempts=3).complete(MESSAGES, PARAMS)
    assert len(sleeps) == 2


def test_no_key_sends_no_authorization(fake_server: FakeServer, make: Any) -> None:
    fake_server.queue(answer("ok"))
    make(fake_server.url, api_key=None).complete(MESSAGES, PARAMS)
    assert "authorization" not in fake_server.seen[0].headers


def test_key_never_appears_in_errors(server: FakeServer, make: Any) -> None:
    server.queue(error(400, f"bad request with Bearer {KEY}"))
    with pytest.raises(ModelError) as caught:
        make(server.url).complete(MESSAGES, PARAMS)
    assert KEY not in str(caught.value)


def test_base_url_must_be_http() -> None:
    with pytest.raises(ModelError, match="http:// or https://"):
        OpenAICompatibleProvider("localhost:11434", "m")
