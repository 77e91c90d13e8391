"""Checks made before any unit runs: a usable model spec, arms that load, a sandbox
that will not run candidates as root, same experiment on resume, replay covers the
suite."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from critiquebench.loop import BASELINE, ArmError
from critiquebench.models import (
    ModelSpecError,
    ReplayFormatError,
    check_model_spec,
    load_replay_file,
)
from critiquebench.pipeline._config import (
    ABSENT,
    EXECUTION_FIELDS,
    ContentFile,
    RunConfig,
    replay_file,
    sim_suite,
)
from critiquebench.pipeline._selection import choose_cases
from critiquebench.suites import Case

if TYPE_CHECKING:  # the store needs pyarrow: imported when a check reads rows
    from critiquebench.pipeline._store import ResultStore

# Rows of schema version 1 hold no config_json: these columns held the experiment
# settings then, and the stagnation rule stopped after 2 rounds without progress.
_V1_COLUMNS = {
    "suite": "suite",
    "limit": "case_limit",
    "reps": "reps",
    "retry_limit": "retry_limit",
    "feedback": "feedback",
    "token_budget": "token_budget",
    "model": "model",
    "verifier_policy": "verifier_policy",
    "reviewers": "reviewers",
    "temperature": "temperature",
    "max_tokens": "max_tokens",
}
_V1_STAGNATION_PATIENCE = 2


class ConfigMismatchError(ValueError):
    """A resume whose experiment settings differ from the run's; the message lists them."""


class ReplayCoverageError(ValueError):
    """A replay file without answers for some cases (or reps) of the run."""


def stored_experiment(row: dict[str, Any]) -> dict[str, Any]:
    """The experiment settings a runs row recorded (v1 rows: the columns they had)."""
    if row.get("config_json"):
        # Plain JSON, not RunConfig: a row written by another version must still compare.
        stored: dict[str, Any] = json.loads(row["config_json"])
        settings = {name: value for name, value in stored.items() if name not in EXECUTION_FIELDS}
    else:
        settings = {field: row[column] for field, column in _V1_COLUMNS.items() if column in row}
        settings["arms"] = str(row["arms"]).split(",")
        settings["stagnation_patience"] = _V1_STAGNATION_PATIENCE
    # Before the setting existed, the critic arms C and D were shown run errors.
    settings.setdefault("run_error_feedback", bool({"C", "D"} & set(settings["arms"])))
    settings.setdefault("canaries", 0)  # runs started before canaries existed had none
    return settings


def like_settings(store: ResultStore, run_id: str) -> dict[str, Any]:
    """Every setting of ``run_id``'s first start, but its id: what ``run --like`` reuses.

    A row of schema version 1 recorded only the experiment settings; the others then
    take their defaults.
    """
    rows = store.run_rows(run_id)
    if not rows:
        raise FileNotFoundError(
            f"--like {run_id}: no run {run_id!r} under {store.root} "
            "(give --output to look in another folder)"
        )
    first = rows[0]
    settings = json.loads(first["config_json"]) if first.get("config_json") else None
    settings = settings if isinstance(settings, dict) else stored_experiment(first)
    unknown = sorted(set(settings) - set(RunConfig.model_fields))
    if unknown:
        raise ValueError(
            f"--like {run_id}: the run was recorded with settings this version does not "
            f"know ({', '.join(unknown)}); start it with the options instead"
        )
    settings.pop("run_id", None)
    return settings


def experiment_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``name: old -> new`` for every setting present in ``old`` whose value changed."""
    return [
        f"{name}: {json.dumps(old[name])} (run) vs {json.dumps(new.get(name))} (now)"
        for name in sorted(old)
        if old[name] != new.get(name)
    ]


def content_differences(row: dict[str, Any], files: tuple[ContentFile, ...]) -> list[str]:
    """One line per suite, replay or price file whose content differs from what the
    run's first start read (nothing for rows before v5, which recorded none)."""
    if not row.get("content_json"):
        return []
    stored: dict[str, Any] = json.loads(row["content_json"])
    lines = []
    for now in files:
        then = stored.get(now.role)
        if not isinstance(then, dict) or then.get("sha256") == now.sha256:
            continue
        state = "is missing now" if now.sha256 == ABSENT else "holds other content now"
        if then.get("sha256") == ABSENT:
            state = "exists now but did not when the run started"
        lines.append(
            f"the {now.role} file {now.path} {state} (the run read {then.get('path')}, "
            f"sha256 {str(then.get('sha256'))[:12]}; now {now.sha256[:12]})"
        )
    return lines


def check_same_experiment(config: RunConfig, store: ResultStore) -> None:
    """Refuse to resume ``config.run_id`` with experiment settings other than its own, or
    with a suite, replay or price file whose content differs from what it read."""
    rows = store.run_rows(config.run_id)
    if not rows:
        return
    first = rows[0]
    files = config.content_files()
    if first.get("experiment_hash") == config.experiment_hash(files):
        return
    differences = experiment_differences(stored_experiment(first), config.experiment_settings())
    differences += content_differences(first, files)
    if differences:
        raise ConfigMismatchError(
            f"run {config.run_id!r} was started with another experiment, so its units "
            f"cannot be mixed with these: {'; '.join(differences)}. Resume it with the "
            "run's settings and files (from the folder it was started in), or start a "
            "new run id."
        )


def check_replay_covers(config: RunConfig, cases: list[Case]) -> None:
    """A replay model must answer every (case, rep) of the run, or nothing starts."""
    path = replay_file(config.model)
    if path is None or not path.exists():
        return  # no replay, or a missing file the provider reports by name
    try:
        replay = load_replay_file(path)
    except ReplayFormatError as exc:
        raise ReplayFormatError(f"--model {config.model}: {exc}") from None
    missing = replay.missing([case.id for case in cases], config.reps)
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if missing[10:] else "")
        raise ReplayCoverageError(
            f"{path} has no answers for {len(missing)} case(s) of suite {config.suite!r}: "
            f"{shown}. Add a line for each, or narrow the run (--limit, another suite)."
        )


class MissingBaselineError(ValueError):
    """A run without arm A, the baseline every reduction is measured against."""


def check_model(config: RunConfig) -> None:
    """Refuse a model spec that could not build a provider (see ``check_model_spec``)."""
    try:
        check_model_spec(config.model)
    except ModelSpecError as exc:
        raise ModelSpecError(f"--model {config.model}: {exc}") from None
    answers_from = sim_suite(config.model)
    if answers_from is not None and answers_from != config.suite:
        raise ModelSpecError(
            f"--model {config.model}: the simulated model answers with the reference "
            f"solutions of suite {answers_from!r}, the run is on --suite {config.suite}; "
            "drop suite= (it then follows --suite) or make it the same"
        )


def check_baseline(config: RunConfig) -> None:
    """Refuse a run without arm A: its report could state no reduction and no verdict.

    Not part of ``preflight``: the library may still run arms alone (e.g. to add
    them to a run whose baseline exists elsewhere); the ``run`` command may not.
    """
    if BASELINE not in config.arm_names:
        arms = ",".join(config.arms)
        raise MissingBaselineError(
            f"--arms {arms}: arm {BASELINE} is missing; it is the baseline every defect "
            f"reduction is measured against, so add it (e.g. --arms {BASELINE},{arms})"
        )


def check_arms(config: RunConfig) -> None:
    """Load every arm, a user's loop included, so a bad one is refused before any work."""
    try:
        config.arm_specs()
    except ArmError as exc:
        raise ArmError(f"--arms {','.join(config.arms)}: {exc}") from None


class SandboxRefusedError(ValueError):
    """No safe sandbox here: without bubblewrap, candidates would run as root."""


def check_sandbox() -> None:
    """Refuse a run whose judges would run candidate code as root (no bubblewrap, and the
    unprivileged user cannot run the interpreter); the message names the fix."""
    from critiquebench.judges import fallback_refusal  # the judges load when a run starts

    try:
        refusal = fallback_refusal()
    except ValueError as exc:  # an unknown CRITIQUEBENCH_SANDBOX value
        raise SandboxRefusedError(str(exc)) from None
    if refusal is not None:
        raise SandboxRefusedError(refusal)


def preflight(config: RunConfig) -> list[Case]:
    """Check the model spec, load the suite and run every check that must pass before
    any work; return the cases."""
    check_model(config)
    check_arms(config)
    check_sandbox()
    cases = choose_cases(config)
    check_replay_covers(config, cases)
    # A run without a folder (<output>/<run_id>, see ResultStore.run_dir) has no rows to
    # resume, and the store's Parquet library need not load (~0.2 s before the CLI can
    # start Prefect's server).
    if (config.output / config.run_id).exists():
        from critiquebench.pipeline._store import ResultStore

        check_same_experiment(config, ResultStore(config.output))
    return cases
