"""Any server that speaks OpenAI's ``/v1/chat/completions`` (Ollama, vLLM, LM Studio)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
)
from critiquebench.models._retry import Failure, RetryPolicy, parse_retry_after, transport_failure

if TYPE_CHECKING:
    import httpx


class _HTTPStatusFailure(Exception):
    """An error response, carried from the request to the classifier."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.status_code)
        self.response = response


class _MalformedResponse(Exception):
    """A 2xx response without the fields a chat completion must have."""


class OpenAICompatibleProvider:
    """POSTs chat completions with httpx; JSON schemas go out as a strict ``json_schema``.

    ``base_url`` is the server root (``http://localhost:11434``); a trailing ``/v1`` is
    accepted too. ``api_key``, when given, is sent as a bearer token.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 60,
        *,
        retry: RetryPolicy | None = None,
    ) -> None:
        root = base_url.rstrip("/").removesuffix("/v1")
        if not root.startswith(("http://", "https://")):
            raise ModelError(f"base URL must start with http:// or https://: {base_url!r}")
        self._url = f"{root}/v1/chat/completions"
        self._model = model
        self._timeout_s = timeout_s
        self._retry = retry or RetryPolicy()
        self._api_key = api_key
        import httpx  # lazily, like every provider's client library

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # One client per provider: connections are reused across calls and threads.
        self._client = httpx.Client(timeout=timeout_s, headers=headers)

    @property
    def model_name(self) -> str:
        return f"openai:{self._model}"

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            "seed": params.seed,
        }
        if schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "critic", "schema": schema, "strict": True},
            }
        started = time.perf_counter()
        text, tokens_in, tokens_out = self._retry.call(
            lambda: self._post(body), self._classify, self.model_name
        )
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            latency_s=time.perf_counter() - started,  # includes retry waits
            model=self.model_name,
            schema_mismatch=schema is not None and not _parses(text),
        )

    def close(self) -> None:
        """Release pooled connections."""
        self._client.close()

    def _post(self, body: dict[str, Any]) -> tuple[str, int, int]:
        response = self._client.post(self._url, json=body)
        if response.status_code >= 400:
            raise _HTTPStatusFailure(response)
        try:
            payload = response.json()
            text = payload["choices"][0]["message"].get("content") or ""
            usage = payload.get("usage") or {}
            return (
                str(text),
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
            )
        except (ValueError, LookupError, TypeError, AttributeError) as exc:
            raise _MalformedResponse(f"{type(exc).__name__}: {exc}") from exc

    def _classify(self, exc: Exception) -> Failure | None:
        failure = self._failure(exc)
        if failure is None or not self._api_key:
            return failure
        # Belt and braces: servers have been known to echo request headers in errors.
        return replace(failure, message=failure.message.replace(self._api_key, "<redacted>"))

    def _failure(self, exc: Exception) -> Failure | None:
        if isinstance(exc, _HTTPStatusFailure):
            response = exc.response
            try:
                details: Any = response.json()
            except ValueError:
                details = None
            error = details.get("error") if isinstance(details, dict) else None
            # OpenAI nests {"error": {"message": ...}}; Ollama and others send {"error": "..."}.
            message = error.get("message") if isinstance(error, dict) else error
            return Failure(
                message=f"{response.status_code}: {message or response.reason_phrase}",
                status=response.status_code,
                retry_after_s=parse_retry_after(response.headers.get("retry-after")),
                details=details,
            )
        if isinstance(exc, _MalformedResponse):
            return Failure(message=f"malformed response: {exc}")
        return transport_failure(exc, self._timeout_s)


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
