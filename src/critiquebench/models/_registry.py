"""Turn a model spec string (``local``, ``gemini:MODEL``, ``replay:PATH``...) into a provider.

Providers are imported lazily, so an SDK loads only when its provider is used.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from urllib.parse import urlparse

from critiquebench.models._limiter import RateLimits
from critiquebench.models._provider import ModelError, ModelProvider

MODEL_SPEC_HELP = (
    "local | local:PATH.gguf | replay:PATH.jsonl | gemini | gemini:MODEL[@BASE_URL] "
    "(key in GEMINI_API_KEY) | openai:MODEL@BASE_URL (e.g. openai:qwen2.5-coder:7b@"
    "http://localhost:11434; key, if any, in OPENAI_API_KEY) | sim[:fix=0.6,het=0.5,...] "
    "(a simulated model with a planted effect, for selftests)"
)


class UnknownModelError(ValueError):
    """A model spec that names no known provider."""


class ModelSpecError(ValueError):
    """A model spec refused before a run starts; the message says what to fix."""


_KINDS = (
    "local, local:PATH.gguf, replay:PATH.jsonl, gemini[:MODEL], openai:MODEL@URL, sim[:k=v,...]"
)
_GGUF_MAGIC = b"GGUF"


def _check_url(url: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ModelSpecError(
            f"{url!r} is not an http(s) URL; give one such as http://localhost:11434"
        )


def _check_file(path: Path, what: str) -> None:
    if not path.exists():
        raise ModelSpecError(f"no such file: {path}; give the path of {what}")
    if not path.is_file():
        raise ModelSpecError(f"{path} is not a file; give the path of {what}")


def _check_local(argument: str) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelSpecError("llama-cpp-python is not installed; `make venv` builds it")
    if not argument:
        from critiquebench.models._local import default_model_path

        try:
            default_model_path()  # finds the file without importing or loading anything
        except ModelError as exc:
            raise ModelSpecError(str(exc)) from None
        return
    path = Path(argument)
    _check_file(path, "a GGUF model file (or use plain 'local' for the embedded model)")
    with path.open("rb") as handle:
        if handle.read(len(_GGUF_MAGIC)) != _GGUF_MAGIC:
            raise ModelSpecError(f"{path} is not a GGUF model file (llama.cpp reads only GGUF)")


def _check_gemini(argument: str) -> None:
    from critiquebench.models._gemini import SECRET_BLOCK_VARIABLE, gemini_credentials_configured

    _, at, base_url = argument.partition("@")
    if at:
        _check_url(base_url)
    if not gemini_credentials_configured():
        # Names the variables only: a key, when there is one, is never echoed.
        raise ModelSpecError(
            "no API key; set GEMINI_API_KEY or GOOGLE_API_KEY, or name a Prefect Secret "
            f"block in {SECRET_BLOCK_VARIABLE}"
        )


def check_model_spec(spec: str) -> None:
    """Refuse a spec that could not build a provider, without building it.

    Cheap and offline: no model is loaded, no SDK imported, no server contacted, so
    a bad ``--model`` is one clear error before any work. A Prefect Secret block
    named for the Gemini key is taken on trust; only the provider can read it.
    """
    kind, _, argument = spec.partition(":")
    if kind == "gemini":
        _check_gemini(argument)
    elif kind == "openai":
        model, _, base_url = argument.partition("@")
        if not model or not base_url:
            raise ModelSpecError(
                "openai needs a model and a server: openai:MODEL@BASE_URL "
                "(e.g. openai:qwen2.5-coder:7b@http://localhost:11434)"
            )
        _check_url(base_url)
    elif kind == "local":
        _check_local(argument)
    elif kind == "replay":
        if not argument:
            raise ModelSpecError("replay needs a file: replay:PATH.jsonl")
        _check_file(Path(argument), "a replay file (JSONL of saved answers)")
    elif kind == "sim":
        from critiquebench.models._sim import SimParams, SimSpecError

        try:
            SimParams.parse(argument)
        except SimSpecError as exc:
            raise ModelSpecError(str(exc)) from None
    else:
        raise ModelSpecError(f"unknown provider {kind!r}; use one of {_KINDS}")


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
