"""Turn a model spec string (``local``, ``gemini:MODEL``, ``replay:PATH``...) into a provider.

Providers are imported lazily, so an SDK loads only when its provider is used.
"""

from __future__ import annotations

import os
from pathlib import Path

from critiquebench.models._limiter import RateLimits
from critiquebench.models._provider import ModelProvider

MODEL_SPEC_HELP = (
    "local | local:PATH.gguf | replay:PATH.jsonl | gemini | gemini:MODEL[@BASE_URL] "
    "(key in GEMINI_API_KEY) | openai:MODEL@BASE_URL (e.g. openai:qwen2.5-coder:7b@"
    "http://localhost:11434; key, if any, in OPENAI_API_KEY) | sim[:fix=0.6,het=0.5,...] "
    "(a simulated model with a planted effect, for selftests)"
)


class UnknownModelError(ValueError):
    """A model spec that names no known provider."""


def provider_from_spec(spec: str) -> ModelProvider:
    """Build the provider a spec names.

    ``local`` is the embedded SmolLM2-135M; ``local:PATH`` any GGUF file;
    ``replay:PATH`` answers saved in a JSONL file; ``gemini`` the default Gemini model,
    ``gemini:MODEL`` another one; ``openai:MODEL@BASE_URL`` an OpenAI-compatible server;
    ``sim:key=value,...`` the simulated model of ``critiquebench selftest``.
    """
    kind, _, argument = spec.partition(":")
    if kind == "gemini":
        from critiquebench.models._gemini import DEFAULT_GEMINI_MODEL, GeminiProvider

        # gemini:MODEL@BASE_URL goes through a proxy or gateway (as GOOGLE_GEMINI_BASE_URL does).
        model, _, base_url = argument.partition("@")
        return GeminiProvider(model or DEFAULT_GEMINI_MODEL, base_url=base_url or None)
    if kind == "openai":
        from critiquebench.models._openai_compat import OpenAICompatibleProvider

        # Split at the first "@": model names may hold ":" (Ollama tags), URLs hold both.
        model, _, base_url = argument.partition("@")
        if not model or not base_url:
            raise UnknownModelError("openai needs a model and a server: openai:MODEL@BASE_URL")
        return OpenAICompatibleProvider(base_url, model, os.environ.get("OPENAI_API_KEY") or None)
    if kind == "local":
        from critiquebench.models._local import LocalProvider

        return LocalProvider(Path(argument) if argument else None)
    if kind == "replay":
        from critiquebench.models._replay import ReplayProvider

        if not argument:
            raise UnknownModelError("replay needs a file: --model replay:PATH.jsonl")
        path = Path(argument)
        if not path.exists():
            raise FileNotFoundError(f"replay file not found: {path}")
        return ReplayProvider(path)
    if kind == "sim":
        from critiquebench.models._sim import SimParams, SimProvider

        return SimProvider(SimParams.parse(argument))
    raise UnknownModelError(f"unknown model {spec!r}; expected {MODEL_SPEC_HELP}")


def default_rate_limits(spec: str) -> RateLimits:
    """Limits that are safe for the provider a spec names.

    Gemini's defaults fit a free-tier key (10 requests and 250k tokens a minute);
    the local model runs one call at a time anyway; replay needs no limit.
    """
    kind = spec.partition(":")[0]
    if kind == "gemini":
        return RateLimits(max_in_flight=2, requests_per_minute=10, tokens_per_minute=250_000)
    if kind == "local":
        return RateLimits(max_in_flight=1)
    if kind == "openai":
        return RateLimits(max_in_flight=4)
    return RateLimits(max_in_flight=64)


def is_cacheable(spec: str) -> bool:
    """Replay answers are read from a file already; caching them would only add I/O."""
    return spec.partition(":")[0] != "replay"
