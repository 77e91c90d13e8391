"""The cases of a run: its suite, narrowed by the run's selection settings."""

from __future__ import annotations

from critiquebench.pipeline._config import RunConfig
from critiquebench.pipeline._layout import live_files
from critiquebench.pipeline._location import Root, read_parquet
from critiquebench.suites import (
    Case,
    CaseSelection,
    SelectionError,
    load_suite,
    select_cases,
    with_canaries,
)


def failed_cases(output: Root, run_id: str) -> frozenset[str]:
    """Case ids of ``run_id`` with a unit that did not pass or was not measured.

    A unit whose infrastructure failed counts as failed: it has no passing answer,
    and leaving it out would let an arm's missing units look like successes.
    """
    files = live_files(output / run_id, ("cases",))["cases"]
    if not files:
        raise SelectionError(f"--only-failed {run_id}: no run with results at {output / run_id}")
    failed: set[str] = set()
    for path in files:
        table = read_parquet(path, ["case_id", "passed", "error"]).to_pylist()
        failed.update(row["case_id"] for row in table if not row["passed"] or row["error"])
    return frozenset(failed)


def selection_of(config: RunConfig) -> CaseSelection:
    """The run's case selection, the failed cases of ``only_failed`` read now."""
    ids = None if config.only_failed is None else failed_cases(config.output, config.only_failed)
    if ids is not None and not ids:
        raise SelectionError(f"--only-failed {config.only_failed}: no case of it failed")
    return CaseSelection(
        patterns=config.case_ids,
        tags=config.tags,
        ids=ids,
        ids_source="" if ids is None else f"--only-failed {config.only_failed}",
        sample=config.sample,
        seed=config.sample_seed,
        limit=config.limit,
    )


def choose_cases(config: RunConfig) -> list[Case]:
    """The suite's cases this run uses (all of them, the first ``limit``, or a selection),
    then the canaries of the first ``canaries`` of them that can have one."""
    selection = selection_of(config)
    if not selection.chooses:
        return with_canaries(load_suite(config.suite, config.limit), config.canaries)
    return with_canaries(select_cases(load_suite(config.suite), selection), config.canaries)
