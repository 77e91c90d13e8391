"""Turn a model spec string (``local``, ``local:PATH``, ``replay:PATH``) into a provider.

Providers are imported lazily, so an SDK loads only when its provider is used.
"""

from __future__ import annotations

from pathlib import Path

from critiquebench.models._provider import ModelProvider

MODEL_SPEC_HELP = "local | local:PATH.gguf | replay:PATH.jsonl"


class UnknownModelError(ValueError):
    """A model spec that names no known provider."""


def provider_from_spec(spec: str) -> ModelProvider:
    """Build the provider a spec names.

    ``local`` is the embedded SmolLM2-135M; ``local:PATH`` any GGUF file;
    ``replay:PATH`` answers saved in a JSONL file.
    """
    kind, _, argument = spec.partition(":")
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
    raise UnknownModelError(f"unknown model {spec!r}; expected {MODEL_SPEC_HELP}")
