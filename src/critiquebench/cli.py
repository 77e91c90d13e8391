"""The ``critiquebench`` command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import duckdb
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from critiquebench.analysis import (
    PriceFileError,
    PriceTable,
    ReportFormatError,
    RunReport,
    build_report,
    comparison_table,
    connect,
    load_prices,
    read_report,
    summary_table,
    verdict_lines,
    write_reports,
)
from critiquebench.critics import run_quorum_cli
from critiquebench.models import MODEL_SPEC_HELP
from critiquebench.pipeline import RunConfig, RunIncomplete, check_baseline, preflight
from critiquebench.prefect_env import configure_prefect_environment
from critiquebench.prefect_server import local_prefect_api
from critiquebench.suites import SuiteFormatError

app = typer.Typer(
    help="Measure whether an LLM self-critique loop removes defects, and at what cost.",
    no_args_is_help=True,
    add_completion=False,
)
# Piped output (CI logs, files) has no terminal width; 160 columns keeps the table whole.
console = Console(width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True)

OutputOption = Annotated[Path, typer.Option("--output", "-o", help="Folder that holds every run.")]
PricesOption = Annotated[
    Path, typer.Option(help="Price table (USD per million tokens, per model).")
]


_REPORT_FILES = ("report.json", "report.html", "lessons.md")

_RUNNERS: dict[str, Literal["threads", "dask", "ray"]] = {
    "threads": "threads",
    "dask": "dask",
    "ray": "ray",
}


def _error(label: str, message: str) -> None:
    """Print ``label: message`` to stderr, the message literally.

    Messages quote user data (``feedback_tests[0]``, SQL, paths): as rich markup
    their brackets would vanish, ``:x:`` would become an emoji and ``[/]`` would crash.
    """
    errors.print(Text.assemble((f"{label}:", "bold red"), " ", message), soft_wrap=True)


def _fail(message: str) -> typer.Exit:
    _error("error", message)
    return typer.Exit(code=2)


def _check_target(value: float) -> float:
    """The acceptance target is a fraction of defects removed: 0.8 means 80%."""
    if not 0.0 < value <= 1.0:
        raise _fail(
            f"--target {value:g}: the target is a fraction in (0, 1], e.g. 0.8 for an "
            "80% defect reduction"
        )
    return value


TargetOption = Annotated[
    float,
    typer.Option(
        help="Acceptance criterion: the defect reduction an arm must reach, a fraction "
        "in (0, 1] (0.8 = 80%).",
        callback=_check_target,
    ),
]


def _describe(error: ValidationError) -> str:
    return "; ".join(
        f"--{'-'.join(str(p) for p in item['loc']).replace('_', '-')}: {item['msg']}"
        for item in error.errors()
    )


def _load_prices(path: Path) -> PriceTable | None:
    if not path.exists():
        errors.print(Text(f"no price table at {path}: costs are shown as 0"))
    try:
        return load_prices(path)
    except PriceFileError as exc:
        raise _fail(str(exc)) from None


def _write_reports(output: Path, run_id: str, prices: Path, target: float) -> RunReport:
    try:
        return write_reports(output, run_id, prices=_load_prices(prices), target=target).report
    except ValueError as exc:  # a run with no results
        raise _fail(str(exc)) from None


def _flow_report(output: Path, run_id: str) -> RunReport | None:
    try:
        return read_report(output, run_id)
    except (OSError, ReportFormatError):
        return None


def _print_report(report: RunReport) -> None:
    console.print(summary_table(report))
    for line in verdict_lines(report):
        console.print(line, highlight=False)


@app.command()
def run(
    suite: Annotated[str, typer.Option(help="basic, humaneval, or a JSONL suite file.")] = "basic",
    limit: Annotated[int | None, typer.Option(help="Use only the first N cases.")] = None,
    arms: Annotated[str, typer.Option(help="Comma-separated arms, A = baseline.")] = "A,B",
    reps: Annotated[int, typer.Option(help="Repetitions of each (case, arm).")] = 1,
    retry_limit: Annotated[int, typer.Option(help="Maximum fix rounds per unit.")] = 3,
    model: Annotated[str, typer.Option(help=f"Model: {MODEL_SPEC_HELP}.")] = "local",
    max_concurrency: Annotated[int, typer.Option(help="Units run at once.")] = 2,
    run_id: Annotated[
        str | None, typer.Option(help="Run id; an existing id resumes that run.")
    ] = None,
    output: OutputOption = Path("data/runs"),
    feedback: Annotated[
        str, typer.Option(help="visible: loop sees feedback checks only; all: every check.")
    ] = "visible",
    token_budget: Annotated[int, typer.Option(help="Per-unit token budget (0 = none).")] = 20_000,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    max_tokens: Annotated[int, typer.Option(help="Generated-token cap per call.")] = 256,
    stagnation_patience: Annotated[
        int | None,
        typer.Option(
            help="Fix rounds without fewer failures before a loop stops (default: "
            "the retry limit, i.e. never before the budget)."
        ),
    ] = None,
    verifier_policy: Annotated[
        str, typer.Option(help="An unusable critic reply counts as pass (fail_open) or fail.")
    ] = "fail_open",
    reviewers: Annotated[int, typer.Option(help="Quorum reviewers per finding (arm D).")] = 1,
    quorum_threshold: Annotated[
        int | None, typer.Option(help="Votes a quorum decision needs (default: a majority).")
    ] = None,
    cache: Annotated[
        bool, typer.Option("--cache/--no-cache", help="Answer repeated calls from the cache.")
    ] = True,
    cache_dir: Annotated[Path, typer.Option(help="Folder of the call cache.")] = Path("data/cache"),
    max_calls_in_flight: Annotated[
        int | None, typer.Option(help="Model calls at once (default: safe for the provider).")
    ] = None,
    rpm: Annotated[int | None, typer.Option(help="Model calls per minute (default: safe).")] = None,
    tpm: Annotated[int | None, typer.Option(help="Tokens per minute (default: safe).")] = None,
    task_runner: Annotated[
        str, typer.Option(help="Where units run: threads, dask or ray.")
    ] = "threads",
    dask_address: Annotated[
        str | None, typer.Option(help="An existing Dask scheduler (with --task-runner dask).")
    ] = None,
    prices: PricesOption = Path("data/prices.json"),
    target: TargetOption = 0.80,
) -> None:
    """Run the A/B matrix (the ``ab-matrix`` Prefect flow) and print the per-arm report.

    Exit codes: 0 completed; 1 failed (data-quality checks or an unexpected error);
    2 bad input, refused before any work (options, suite, replay file, a resume with
    other experiment settings); 3 incomplete (units failed for infrastructure reasons:
    rerun with the same --run-id to retry only them).
    """
    settings: dict[str, Any] = {
        "suite": suite,
        "limit": limit,
        "arms": arms,
        "reps": reps,
        "retry_limit": retry_limit,
        "model": model,
        "max_concurrency": max_concurrency,
        "output": output,
        "feedback": feedback,
        "token_budget": token_budget or None,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "stagnation_patience": stagnation_patience,
        "verifier_policy": verifier_policy,
        "reviewers": reviewers,
        "quorum_threshold": quorum_threshold,
        "cache": cache,
        "cache_dir": cache_dir,
        "max_calls_in_flight": max_calls_in_flight,
        "requests_per_minute": rpm,
        "tokens_per_minute": tpm,
    }
    if run_id:
        settings["run_id"] = run_id
    try:
        config = RunConfig.model_validate(settings)
        check_baseline(config)
        # A bad model spec, suite, replay file or resume is refused before Prefect starts.
        preflight(config)
    except ValidationError as exc:
        raise _fail(_describe(exc)) from None
    except (SuiteFormatError, FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None
    runner = _RUNNERS.get(task_runner)
    if runner is None:
        raise _fail(f"--task-runner must be threads, dask or ray, not {task_runner!r}")
    configure_prefect_environment(Path(".prefect"))
    # The temporary Prefect API starts first, so its start-up overlaps the imports below.
    with local_prefect_api() as server:
        from flows.ab_matrix import ab_matrix  # imported late: Prefect reads its env at import

        console.print(
            f"run {config.run_id}: suite {config.suite}, arms {','.join(config.arms)}, "
            f"reps {config.reps}, model {config.model}, retry limit {config.retry_limit}"
        )
        problem: Exception | None = None
        try:
            server.wait_ready()
            with server.applied():
                ab_matrix(
                    config,
                    prices=str(prices),
                    target=target,
                    task_runner=runner,
                    dask_address=dask_address,
                )
        except Exception as exc:  # failed units or failed quality checks: report what landed
            problem = exc
        # A flow that finished wrote report.json: print those numbers, do not compute them
        # again. One that stopped early may not have, so build the report from what landed.
        built = _flow_report(config.output, config.run_id) if problem is None else None
        _print_report(built or _write_reports(config.output, config.run_id, prices, target))
        _print_files(config.output / config.run_id)
        # Prefect's shutdown of its temporary server can end the process without the
        # usual buffer flush; a report that never reaches a redirected file is useless.
        sys.stdout.flush()
    if isinstance(problem, RunIncomplete):
        _error("incomplete", str(problem))
        raise typer.Exit(code=3)
    if problem is not None:
        _error("the run did not finish cleanly", str(problem))
        raise typer.Exit(code=1)


def _print_files(run_dir: Path) -> None:
    console.print(f"\nFiles written under {run_dir}:")
    for table in ("runs", "cases", "attempts", "calls"):
        count = len(list((run_dir / table).glob("*.parquet")))
        console.print(f"  {run_dir / table}/  ({count} Parquet file(s))")
    for name in _REPORT_FILES:
        if (run_dir / name).exists():
            console.print(f"  {run_dir / name}")
    escalations = run_dir / "escalations"
    if escalations.exists():
        console.print(f"  {escalations}/  ({len(list(escalations.glob('*.md')))} record(s))")


@app.command()
def report(
    run_id: Annotated[str, typer.Argument(help="The run to report on.")],
    output: OutputOption = Path("data/runs"),
    prices: PricesOption = Path("data/prices.json"),
    target: TargetOption = 0.80,
) -> None:
    """Rebuild the report of a landed run from its Parquet files alone.

    Prints the per-arm table and writes report.json, report.html and lessons.md into
    the run folder.
    """
    built = _write_reports(output, run_id, prices, target)
    _print_report(built)
    run_dir = output / run_id
    console.print("\n" + "\n".join(str(run_dir / name) for name in _REPORT_FILES))


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="First run (e.g. one model).")],
    run_b: Annotated[str, typer.Argument(help="Second run (e.g. another model).")],
    output: OutputOption = Path("data/runs"),
    prices: PricesOption = Path("data/prices.json"),
    target: TargetOption = 0.80,
) -> None:
    """Compare two runs arm by arm: defects, reduction, pass rate, latency, cost."""
    table = _load_prices(prices)
    connection = connect(output, [run_a, run_b], snapshot=True)
    reports = [build_report(connection, run, prices=table, target=target) for run in (run_a, run_b)]
    for run, built in zip((run_a, run_b), reports, strict=True):
        if not built.arms:
            raise _fail(f"no results for run {run!r} under {output}")
    console.print(comparison_table(reports[0], reports[1]))


@app.command()
def quorum(
    vote_files: Annotated[
        list[Path] | None, typer.Argument(help="Reviewer replies holding verdict blocks.")
    ] = None,
    stdin: Annotated[
        bool, typer.Option("--stdin", help="Read replies from stdin, separated by '---' lines.")
    ] = False,
    threshold: Annotated[int, typer.Option(help="Votes a decision needs.")] = 2,
) -> None:
    """Tally reviewers' votes per finding; exit 1 if any finding is KILL or UNVERIFIED."""
    text = sys.stdin.read() if stdin else None
    printed, code = run_quorum_cli(None if stdin else list(vote_files or []), text, threshold)
    console.print(printed, highlight=False, markup=False)
    raise typer.Exit(code=code)


@app.command("validate-suite")
def validate_suite(
    suite: Annotated[
        str, typer.Argument(help="A bundled suite (basic, humaneval) or a JSONL suite file.")
    ],
    references: Annotated[
        bool,
        typer.Option(
            "--references/--no-references",
            help="Run every reference_solution through the Python judge (~50 ms per case).",
        ),
    ] = True,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on warnings too (by default they do not).")
    ] = False,
) -> None:
    """Check a suite: every bad line, feedback that cannot fail, references that fail.

    Exit 0 when valid (warnings do not fail validation unless --strict), 1 when a
    reference solution fails its own checks (or a warning under --strict), 2 when
    the suite cannot be used (missing, a folder, not UTF-8, malformed lines).
    """
    from critiquebench.suites import HumanEvalUnavailableError
    from critiquebench.suites import validate_suite as run_validation

    try:
        found = run_validation(suite, check_references=references)
    except (FileNotFoundError, HumanEvalUnavailableError) as exc:
        raise _fail(str(exc)) from None
    for problem in found.problems:
        console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    console.print(found.summary(), markup=False, highlight=False, soft_wrap=True)
    if found.of_kind("format"):
        raise typer.Exit(code=2)
    if not found.ok(strict=strict):
        raise typer.Exit(code=1)


def _sql_error(error: Exception) -> str:
    """DuckDB's message on one line, saying why a refused statement was refused."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    refused = isinstance(error, duckdb.PermissionException) or "read-only mode" in first
    if refused:
        first += " (`critiquebench sql` is read-only: it reads only the run's tables)"
    return first


@app.command()
def sql(
    query: Annotated[
        str | None,
        typer.Argument(help="SQL over the views runs, cases, attempts, calls; omit for help."),
    ] = None,
    output: OutputOption = Path("data/runs"),
    max_rows: Annotated[int, typer.Option(min=1, help="Print at most this many rows.")] = 100,
    run: Annotated[
        list[str] | None,
        typer.Option(help="Only this run's tables (repeat for several); default: every run."),
    ] = None,
) -> None:
    """Run a read-only SQL query over the runs' tables, or show how to open a session."""
    # Imported here, not at the top, until critiquebench.analysis re-exports these.
    from critiquebench.analysis._sql import interactive_help, query_table

    if query is None:
        # soft_wrap: the commands must stay on one line to be copied; markup off for paths.
        console.print(interactive_help(output, run), markup=False, highlight=False, soft_wrap=True)
        return
    try:
        table, note = query_table(output, query, max_rows=max_rows, runs=run)
    except duckdb.Error as exc:
        raise _fail(f"query failed: {_sql_error(exc)}") from None
    console.print(table)
    console.print(note, markup=False, emoji=False, highlight=False)


@app.command()
def check(
    run_id: Annotated[str, typer.Argument(help="The run to check.")],
    output: OutputOption = Path("data/runs"),
) -> None:
    """Check a landed run's tables against the data-quality expectations (exit 1 on failure)."""
    # Imported here: Great Expectations takes seconds to import; only this command needs it.
    from critiquebench.quality import check_command

    raise typer.Exit(code=check_command(run_id, output))


@app.command()
def selftest(
    experiments: Annotated[int, typer.Option(min=1, help="End-to-end experiments per reps.")] = 20,
    reps: Annotated[
        str, typer.Option(help="Comma-separated reps per (case, arm) to test.")
    ] = "1,3",
    cases: Annotated[int | None, typer.Option(min=1, help="First N cases of the suite.")] = None,
    retry_limit: Annotated[int, typer.Option(min=1, help="Fix rounds of arm B.")] = 2,
    draft: Annotated[float, typer.Option(help="P(first draft buggy), median case.")] = 0.7,
    fix: Annotated[float, typer.Option(help="P(a fix round fixes), median case.")] = 0.6,
    het: Annotated[float, typer.Option(help="Case heterogeneity (logit-scale SD).")] = 1.0,
    noise: Annotated[float, typer.Option(help="Rep-to-rep noise (logit-scale SD).")] = 0.3,
    regress: Annotated[float, typer.Option(help="P(a fix round breaks the answer).")] = 0.05,
    target: TargetOption = 0.80,
    seed: Annotated[int, typer.Option(help="Seed of the first experiment.")] = 0,
    statistical: Annotated[
        int, typer.Option(min=0, help="Extra statistics-only experiments per reps (0: none).")
    ] = 2_000,
) -> None:
    """Run seeded experiments on a simulated model with a known effect; print CI coverage,
    bias and verdict error rates.

    Each experiment is a real run (loop, real judge, Parquet, DuckDB report) of
    `--model sim:...` over arms A and B, through the library rather than Prefect:
    a flow per experiment would spend most of its time starting up. About 10 s per
    experiment at 3 reps on 44 cases. `--statistical` adds many fast experiments
    drawn from the same model without loop and judge, to pin coverage down.
    """
    from critiquebench.analysis._selftest import (
        SelftestSettings,
        run_selftest,
        selftest_table,
        simulate_selftest,
    )
    from critiquebench.models import SimParams, SimSpecError

    try:
        params = SimParams(draft=draft, fix=fix, het=het, noise=noise, regress=regress)
        params.validate()
        rep_counts = [int(part) for part in reps.split(",") if part.strip()]
    except (SimSpecError, ValueError) as exc:
        raise _fail(f"selftest settings: {exc}") from None
    results = []
    for count in rep_counts:
        settings = SelftestSettings(
            params=params, experiments=experiments, reps=count, cases=cases,
            retry_limit=retry_limit, target=target, first_seed=seed,
        )  # fmt: skip
        results.append(run_selftest(settings))
        if statistical:
            bulk = SelftestSettings(
                params=params, experiments=statistical, reps=count, retry_limit=retry_limit,
                target=target, first_seed=seed, resamples=1_000,
            )  # fmt: skip
            results.append(simulate_selftest(bulk, n_cases=results[-1].outcomes[0].n_cases))
    console.print(selftest_table(results))


@app.command()
def power(
    effect: Annotated[float, typer.Option(help="The true defect reduction to plant.")],
    target: TargetOption = 0.80,
    reps: Annotated[int, typer.Option(min=1, help="Reps per (case, arm).")] = 3,
    cases: Annotated[
        int | None, typer.Option(min=1, help="Number of cases; omit to search for the fewest.")
    ] = None,
    retry_limit: Annotated[int, typer.Option(min=1, help="Fix rounds of arm B.")] = 2,
    draft: Annotated[float, typer.Option(help="P(first draft buggy), median case.")] = 0.7,
    het: Annotated[float, typer.Option(help="Case heterogeneity (logit-scale SD).")] = 1.0,
    noise: Annotated[float, typer.Option(help="Rep-to-rep noise (logit-scale SD).")] = 0.3,
    goal: Annotated[float, typer.Option(help="Wanted probability of the right verdict.")] = 0.8,
    experiments: Annotated[int, typer.Option(min=10, help="Simulated runs per design.")] = 200,
) -> None:
    """How likely a verdict is for a planted effect, or the fewest cases to make it likely.

    Simulates the `sim:` model (the fix probability is solved so the true reduction
    equals --effect) and applies the report's cluster bootstrap and acceptance rule.
    """
    from critiquebench.analysis._power import (
        estimate_power,
        min_cases_for_power,
        params_for_effect,
        power_table,
    )
    from critiquebench.models import SimParams, SimSpecError

    try:
        base = SimParams(draft=draft, het=het, noise=noise)
        base.validate()
        params = params_for_effect(effect, retry_limit, base)
    except (SimSpecError, ValueError) as exc:
        raise _fail(f"power settings: {exc}") from None
    if cases is not None:
        result = estimate_power(
            params, target=target, n_cases=cases, reps=reps, retry_limit=retry_limit,
            experiments=experiments,
        )  # fmt: skip
        console.print(power_table([result]))
        return
    found, tried = min_cases_for_power(
        params, target=target, reps=reps, retry_limit=retry_limit, power=goal,
        experiments=experiments,
    )  # fmt: skip
    console.print(power_table(tried))
    right = "met" if effect >= target else "not met"
    if found is None:
        console.print(f"No design tried reaches {goal:.0%} chance of '{right}'.")
    else:
        console.print(
            f"Fewest cases for a {goal:.0%} chance of '{right}' at {reps} rep(s): {found}"
        )


def main() -> None:
    """Entry point of the ``critiquebench`` script."""
    app()
