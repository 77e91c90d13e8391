"""Model providers: one small interface, several backends."""

from typing import TYPE_CHECKING

from critiquebench.models._cache import CachingProvider, CallCache, cache_key
from critiquebench.models._gemini import DEFAULT_GEMINI_MODEL, GeminiProvider
from critiquebench.models._import_inspect import ImportFormatError, inspect_replay_lines
from critiquebench.models._import_promptfoo import promptfoo_replay_lines
from critiquebench.models._limiter import LimitedProvider, RateLimiter, RateLimits
from critiquebench.models._local import LocalProvider, default_model_path
from critiquebench.models._openai_compat import OpenAICompatibleProvider
from critiquebench.models._provider import (
    ROLES,
    CallContext,
    Completion,
    GenerationParams,
    Message,
    MessageRole,
    ModelError,
    ModelProvider,
    Role,
    Usage,
)
from critiquebench.models._registry import (
    MODEL_SPEC_HELP,
    ModelSpecError,
    UnknownModelError,
    check_model_spec,
    default_rate_limits,
    is_cacheable,
    provider_from_spec,
)
from critiquebench.models._replay import (
    AnswerCost,
    ReplayFile,
    ReplayFormatError,
    ReplayLine,
    ReplayProvider,
    load_replay_file,
    write_replay_file,
)
from critiquebench.models._retry import QuotaExhaustedError, RetryPolicy
from critiquebench.models._scripted import ScriptedProvider
from critiquebench.models._shared_cache import SharedCallCache
from critiquebench.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from critiquebench.models._sim import (
        SimParams,
        SimProvider,
        SimSpecError,
        draft_state,
        shift_probability,
        true_reduction,
        true_resample_reduction,
        unit_states,
    )

# The simulated model needs numpy; commands that never simulate do not import it.
__getattr__, __dir__ = lazy_exports(
    __name__,
    dict.fromkeys(
        (
            "SimParams",
            "SimProvider",
            "SimSpecError",
            "draft_state",
            "shift_probability",
            "true_reduction",
            "true_resample_reduction",
            "unit_states",
        ),
        "_sim",
    ),
)

__all__ = [
    "DEFAULT_GEMINI_MODEL",
    "MODEL_SPEC_HELP",
    "ROLES",
    "AnswerCost",
    "CachingProvider",
    "CallCache",
    "CallContext",
    "Completion",
    "GeminiProvider",
    "GenerationParams",
    "ImportFormatError",
    "LimitedProvider",
    "LocalProvider",
    "Message",
    "MessageRole",
    "ModelError",
    "ModelProvider",
    "ModelSpecError",
    "OpenAICompatibleProvider",
    "QuotaExhaustedError",
    "RateLimiter",
    "RateLimits",
    "ReplayFile",
    "ReplayFormatError",
    "ReplayLine",
    "ReplayProvider",
    "RetryPolicy",
    "Role",
    "ScriptedProvider",
    "SharedCallCache",
    "SimParams",
    "SimProvider",
    "SimSpecError",
    "UnknownModelError",
    "Usage",
    "cache_key",
    "check_model_spec",
    "default_model_path",
    "default_rate_limits",
    "draft_state",
    "inspect_replay_lines",
    "is_cacheable",
    "load_replay_file",
    "promptfoo_replay_lines",
    "provider_from_spec",
    "shift_probability",
    "true_reduction",
    "true_resample_reduction",
    "unit_states",
    "write_replay_file",
]
