"""Model providers: one small interface, several backends."""

from critiquebench.models._gemini import DEFAULT_GEMINI_MODEL, GeminiProvider
from critiquebench.models._local import LocalProvider, default_model_path
from critiquebench.models._openai_compat import OpenAICompatibleProvider
from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
    ModelProvider,
)
from critiquebench.models._registry import MODEL_SPEC_HELP, UnknownModelError, provider_from_spec
from critiquebench.models._replay import ReplayFormatError, ReplayProvider, load_replay_file
from critiquebench.models._retry import QuotaExhaustedError, RetryPolicy
from critiquebench.models._scripted import ScriptedProvider

__all__ = [
    "DEFAULT_GEMINI_MODEL",
    "MODEL_SPEC_HELP",
    "CallContext",
    "Completion",
    "GeminiProvider",
    "GenerationParams",
    "LocalProvider",
    "Message",
    "ModelError",
    "ModelProvider",
    "OpenAICompatibleProvider",
    "QuotaExhaustedError",
    "ReplayFormatError",
    "ReplayProvider",
    "RetryPolicy",
    "ScriptedProvider",
    "UnknownModelError",
    "default_model_path",
    "load_replay_file",
    "provider_from_spec",
]
