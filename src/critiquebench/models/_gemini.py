"""Gemini through the official ``google-genai`` client, with our retry policy around it."""

from __future__ import annotations

import json
import os
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
from critiquebench.models._retry import (
    Failure,
    RetryPolicy,
    parse_retry_after,
    retry_info_delay,
    transport_failure,
)

if TYPE_CHECKING:
    from google.genai import types

DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
# The SDK's own order: it prefers GOOGLE_API_KEY when both are set.
_KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")


SECRET_BLOCK_VARIABLE = "CRITIQUEBENCH_GEMINI_SECRET_BLOCK"


def _environment_key() -> str:
    return next((v for n in _KEY_VARIABLES if (v := os.environ.get(n, "").strip())), "")


def gemini_credentials_configured() -> bool:
    """Whether a key is set in the environment or a Secret block is named.

    A cheap check made before a run starts: it reads no block (that needs a Prefect
    server), so a named block that does not exist is still found only by the provider.
    """
    return bool(_environment_key() or os.environ.get(SECRET_BLOCK_VARIABLE, "").strip())


def gemini_api_key() -> str:
    """The API key: GOOGLE_API_KEY or GEMINI_API_KEY, else the Prefect Secret block
    named by CRITIQUEBENCH_GEMINI_SECRET_BLOCK (for workers that hold no plain key).
    """
    key = _environment_key()
    if key:
        return key
    block = os.environ.get(SECRET_BLOCK_VARIABLE, "").strip()
    if block:
        from prefect.blocks.system import Secret

        try:
            value = Secret.load(block).get()  # type: ignore[union-attr]
        except ValueError as exc:
            raise ModelError(f"Prefect Secret block {block!r} could not be loaded: {exc}") from None
        if isinstance(value, str) and value.strip():
            return value.strip()
        raise ModelError(f"Prefect Secret block {block!r} holds no API key string")
    raise ModelError(
        "no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or name a Prefect "
        f"Secret block in {SECRET_BLOCK_VARIABLE}"
    )


class GeminiProvider:
    """``generateContent`` on the Gemini API; the key comes from the environment.

    ``base_url`` (or ``GOOGLE_GEMINI_BASE_URL``) points the client at a proxy or a
    test server; ``thinking_budget`` caps thought tokens, which count against
    ``max_tokens`` on thinking models.
    """

    def __init__(
        self,
        model: str = DEFAULT_GEMINI_MODEL,
        *,
        base_url: str | None = None,
        timeout_s: float = 120.0,
        thinking_budget: int | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        key = gemini_api_key()
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        from google import genai

        self._key = key
        self._model = model
        self._timeout_s = timeout_s
        self._thinking_budget = thinking_budget
        self._retry = retry or RetryPolicy()
        options = genai.types.HttpOptions(
            base_url=base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or None,
            timeout=max(1, round(timeout_s * 1000)),  # the SDK counts milliseconds
            # One attempt: the SDK's tenacity retries would multiply ours and ignore quotas.
            retry_options=genai.types.HttpRetryOptions(attempts=1),
        )
        # vertexai=False: GOOGLE_GENAI_USE_VERTEXAI in the environment must not reroute us.
        self._client = genai.Client(vertexai=False, api_key=key, http_options=options)

    @property
    def model_name(self) -> str:
        return f"gemini:{self._model}"

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        from google.genai import types

        contents = [
            types.Content(
                role="model" if m.role == "assistant" else "user",
                parts=[types.Part(text=m.content)],
            )
            for m in messages
            if m.role != "system"
        ]
        config = self._config(messages, params, schema)
        started = time.perf_counter()
        response = self._retry.call(
            lambda: self._client.models.generate_content(
                model=self._model, contents=contents, config=config
            ),
            self._classify,
            self.model_name,
        )
        latency = time.perf_counter() - started  # includes retry waits: what the run paid
        usage = response.usage_metadata or types.GenerateContentResponseUsageMetadata()
        # None when the model produced no text part (e.g. all tokens went to thinking).
        text = response.text or ""
        return Completion(
            text=text,
            tokens_in=usage.prompt_token_count or 0,
            # Thought tokens are billed as output and eat into max_output_tokens.
            tokens_out=(usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0),
            latency_s=latency,
            model=self.model_name,
            schema_mismatch=schema is not None and not _parses(text),
        )

    def _config(
        self, messages: Sequence[Message], params: GenerationParams, schema: dict[str, Any] | None
    ) -> types.GenerateContentConfig:
        from google.genai import types

        system = "\n\n".join(m.content for m in messages if m.role == "system")
        return types.GenerateContentConfig(
            system_instruction=system or None,
            temperature=params.temperature,
            max_output_tokens=params.max_tokens,
            seed=params.seed & 0x7FFFFFFF,  # the API's seed is an int32; ours is a crc32
            response_mime_type="application/json" if schema is not None else None,
            response_json_schema=schema,
            thinking_config=None
            if self._thinking_budget is None
            else types.ThinkingConfig(thinking_budget=self._thinking_budget),
        )

    def _classify(self, exc: Exception) -> Failure | None:
        failure = self._failure(exc)
        if failure is None:
            return None
        # Belt and braces: the key travels in a header, but must never reach a log.
        return replace(failure, message=failure.message.replace(self._key, "<redacted>"))

    def _failure(self, exc: Exception) -> Failure | None:
        import pydantic
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            headers = getattr(exc.response, "headers", None)
            wait = parse_retry_after(headers.get("retry-after") if headers is not None else None)
            return Failure(
                message=f"{exc.code} {exc.status}: {exc.message}",
                status=exc.code,
                retry_after_s=retry_info_delay(exc.details) if wait is None else wait,
                details=exc.details,
            )
        # The SDK parses a 200 body with bare json.loads, so a proxy's HTML page lands here too.
        malformed = json.JSONDecodeError, errors.UnknownApiResponseError, pydantic.ValidationError
        if isinstance(exc, malformed):
            return Failure(message=f"malformed response: {type(exc).__name__}")
        return transport_failure(exc, self._timeout_s)


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
