"""The ``critiquebench`` command line.

The options of ``run`` are generated from ``RunConfig`` (see ``critiquebench._cli._options``);
``--output``, ``--prices`` and ``--target`` of the other commands come from the same
fields. Heavy libraries (Prefect, DuckDB, Great Expectations, LangGraph, Altair) are
imported inside the commands that need them, so help and refusals answer at once.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from critiquebench._cli._options import (
    TypedNamesCommand,
    describe_errors,
    given_values,
    keyword_parameter,
    model_options,
    typer_option,
    typer_parameter,
    with_parameters,
)
from critiquebench.pipeline import (
    Root,
    RunConfig,
    UnknownRunError,
    check_baseline,
    like_settings,
    preflight,
    resolve_run,
    store_root,
)
from critiquebench.runtime.project import default_output, default_prefect_home
from critiquebench.suites import SuiteFormatError

if TYPE_CHECKING:
    from critiquebench._cli._design import DesignNote
    from critiquebench.analysis import PriceTable, RunReport, StoredPrices
    from critiquebench.suites import Case

app = typer.Typer(
    help="Measure whether an LLM self-critique loop removes defects, and at what cost.",
    no_args_is_help=True,
    add_completion=False,
)
# Piped output (CI logs, files) has no terminal width; 160 columns keeps the table whole.
console = Console(width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True)


def _print_version(value: bool) -> None:
    if value:
        from importlib import metadata

        console.print(f"critiquebench {metadata.version('critiquebench')}", highlight=False)
        raise typer.Exit(code=0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    pass


_RUN_OPTIONS = model_options(RunConfig)
_OPTION = {option.field: option for option in _RUN_OPTIONS}

OutputOption = Annotated[str | None, typer_option(_OPTION["output"])]
PricesOption = Annotated[str | None, typer_option(_OPTION["prices"])]
TargetOption = Annotated[str | None, typer_option(_OPTION["target"])]
TARGET_DEFAULT = _OPTION["target"].default_text

_REPORT_FILES = ("report.json", "report.html", "lessons.md")
RUN_REF = 'a run id, a unique prefix of one, or "latest"'


def _error(label: str, message: str) -> None:
    """Print ``label: message`` to stderr, the message literally.

    Messages quote user data (``feedback_tests[0]``, SQL, paths): as rich markup
    their brackets would vanish, ``:x:`` would become an emoji and ``[/]`` would crash.
    """
    errors.print(Text.assemble((f"{label}:", "bold red"), " ", message), soft_wrap=True)


def _fail(message: str) -> typer.Exit:
    _error("error", message)
    return typer.Exit(code=2)


def _resolve(folder: Root, ref: str, option: str = "") -> str:
    """The run ``ref`` names under ``folder`` (an id, a unique prefix of one, or
    ``latest``); refused in one line naming ``ref`` and how to list the runs."""
    try:
        return resolve_run(folder, ref, option)
    except UnknownRunError as exc:
        raise _fail(str(exc)) from None


def _setting(name: str, raw: str | None) -> Any:
    """One ``RunConfig`` setting given as an option of another command, checked by the
    field (e.g. ``--target 5`` is refused) and defaulted by it (e.g. ``--output``)."""
    given = given_values([_OPTION[name]], {name: raw})
    try:
        return getattr(RunConfig.model_validate(given), name)
    except ValidationError as exc:
        raise _fail(describe_errors(exc, {}, {name: raw})) from None


def _stored_settings(output: Root, run_id: str) -> dict[str, Any]:
    """The settings run ``run_id`` was started with; empty for an unknown or old run."""
    from critiquebench.pipeline import ResultStore

    try:
        return like_settings(ResultStore(output), run_id)
    except (FileNotFoundError, ValueError):
        return {}


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _run_settings(
    folder: Root, run_id: str, given: dict[str, Any], target: str | None
) -> tuple[PriceTable | None, float]:
    """The price table and target to report ``run_id`` with: those given as options,
    else those the run was started with (its stored table, whatever folder this is),
    else the defaults."""
    stored = _stored_settings(folder, run_id)
    goal: float = _setting("target", given["target"] or _text(stored.get("target")) or target)
    if not given["prices"]:
        recorded = _recorded_prices(folder, run_id)
        if recorded is not None:
            return recorded.table, goal
    return _load_prices(_setting("prices", given["prices"] or stored.get("prices"))), goal


def _recorded_prices(folder: Root, run_id: str) -> StoredPrices | None:
    """The price table run ``run_id`` stored at its first start (None: an older run)."""
    from critiquebench.analysis import PriceFileError, stored_prices
    from critiquebench.pipeline import ResultStore

    rows = ResultStore(folder).run_rows(run_id) if (folder / run_id).exists() else []
    try:
        return stored_prices(rows[0]) if rows else None
    except PriceFileError as exc:
        raise _fail(str(exc)) from None


def _load_prices(path: Path) -> PriceTable | None:
    from critiquebench.analysis import PriceFileError, load_prices

    if not path.exists():
        errors.print(Text(f"no price table at {path}: costs are shown as 0"))
    try:
        return load_prices(path)
    except PriceFileError as exc:
        raise _fail(str(exc)) from None


def _write_reports(
    output: Root, run_id: str, prices: PriceTable | None, target: float
) -> RunReport:
    from critiquebench.analysis import write_reports

    try:
        return write_reports(output, run_id, prices=prices, target=target).report
    except ValueError as exc:  # a run with no results
        raise _fail(str(exc)) from None


def _flow_report(output: Root, run_id: str) -> RunReport | None:
    from critiquebench.analysis import ReportFormatError, read_report

    try:
        return read_report(output, run_id)
    except (OSError, ReportFormatError):
        return None


def _print_report(report: RunReport) -> None:
    from critiquebench.analysis import summary_table, verdict_lines

    console.print(summary_table(report))
    for line in verdict_lines(report):  # markup off: a line may quote a candidate's error
        console.print(line, highlight=False, markup=False)


def run_config(
    values: dict[str, Any], like: str | None, typed: dict[str, str] | None = None
) -> RunConfig:
    """The configuration of ``critiquebench run``: the options given (``values``, as
    typed; None = not given) over the settings of run ``like``, over the defaults."""
    given = given_values(_RUN_OPTIONS, values)
    base: dict[str, Any] = {}
    if like:
        from critiquebench.pipeline import ResultStore

        output = store_root(given.get("output") or default_output())
        base = like_settings(ResultStore(output), resolve_run(output, like, "--like"))
    raw = {name: value for name, value in values.items() if value is not None}
    try:
        return RunConfig.model_validate({**base, **given})
    except ValidationError as exc:
        raise _fail(describe_errors(exc, typed or {}, raw)) from None


def _given(ctx: typer.Context, values: dict[str, Any]) -> dict[str, Any]:
    """The options the user set (on the command line or through their environment
    variable); the others are None, so ``--like`` settings and defaults apply."""
    unset = ("DEFAULT", "DEFAULT_MAP")
    sources = {name: ctx.get_parameter_source(name) for name in values}
    return {
        name: None if source is None or source.name in unset else value
        for (name, value), source in zip(values.items(), sources.values(), strict=True)
    }


class Requirement(StrEnum):
    """What ``--require`` asks of a run's verdict."""

    met = "met"


RequireOption = Annotated[
    Requirement | None,
    typer.Option(
        "--require",
        help="Gate for CI: exit 0 only when every arm compared with A is met; 4 when one is "
        "not met, 5 when one is inconclusive, 3 when units were not measured.",
    ),
]
JunitOption = Annotated[
    Path | None,
    typer.Option(
        "--junit",
        metavar="FILE",
        help="Also write a JUnit XML summary there: a test per arm (met passes, not met "
        "fails, inconclusive is skipped) and one for every unit measured.",
    ),
]


@dataclass(frozen=True)
class CiOptions:
    """The gate and the JUnit file asked of a run (not settings of the experiment)."""

    require: Requirement | None = None
    junit: Path | None = None


def _finish_ci(report: RunReport, ci: CiOptions, *, say: bool = True) -> int:
    """Write the JUnit file and apply the gate; the exit code the gate asks for (0
    without one). ``say``: print the gate's line (not when stdout holds JSON)."""
    from critiquebench._cli._machine import gate, junit_xml

    if ci.junit is not None:
        from critiquebench.pipeline import atomic_write_text

        atomic_write_text(ci.junit, junit_xml(report))
    if ci.require is None:
        return 0
    outcome = gate(report)
    if say:
        console.print(outcome.line(), markup=False, highlight=False)
    return outcome.exit_code


def run(**values: Any) -> None:
    """Run the A/B matrix (the ab-matrix Prefect flow) and print the per-arm report.

    Every option but --like is a field of RunConfig; 'none' unsets an optional one.
    --like RUN_ID starts a new run with the settings of RUN_ID's first start; options
    given with it override those settings.

    Exit codes: 0 completed; 1 failed (data-quality checks or an unexpected error);
    2 bad input, refused before any work (options, suite, replay file, a resume with
    other experiment settings or files, no bubblewrap where the fallback sandbox would
    run candidates as root); 3 incomplete (units failed for infrastructure reasons:
    `critiquebench resume RUN` retries only them); 130 interrupted (Ctrl-C: units not
    started are left for `critiquebench resume RUN`; a second Ctrl-C quits at once).
    """
    ctx: typer.Context = values.pop("ctx")
    like: str | None = values.pop("like")
    ci = CiOptions(values.pop("require"), values.pop("junit"))
    try:
        config = run_config(_given(ctx, values), like, ctx.meta.get("typed_options"))
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None
    _checked_execute(config, ci)


def _checked_execute(config: RunConfig, ci: CiOptions) -> None:
    """Check ``config`` before any work, then run it with Ctrl-C handled."""
    from critiquebench._cli._interrupt import resume_command, stop_on_interrupt

    resume = resume_command(config.run_id, config.output, store_root(default_output()))
    with stop_on_interrupt(config.output, config.run_id, resume):
        try:
            check_baseline(config)
            # A bad model spec, suite, replay file or resume is refused before Prefect starts.
            cases = preflight(config)
        except (SuiteFormatError, FileNotFoundError, ValueError) as exc:
            raise _fail(str(exc)) from None
        _execute(config, cases, resume, ci)


@app.command()
def resume(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help=f"The run to resume: {RUN_REF}.")],
    output: OutputOption = None,
    require: RequireOption = None,
    junit: JunitOption = None,
) -> None:
    """Continue a run with the settings it was started with: only its unfinished units
    run (those never started, interrupted, or recorded with an infrastructure error).

    The same as `run --like RUN --run-id RUN`; exit codes are those of `run`.
    """
    folder: Root = _setting("output", output)
    run_id = _resolve(folder, run_ref)
    try:
        config = run_config({"run_id": run_id, "output": str(folder)}, run_id)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None
    _checked_execute(config, CiOptions(require, junit))


_LIKE = typer.Option(
    "--like",
    metavar="RUN_ID",
    help="Start a new run with exactly the settings of RUN_ID (found under --output; "
    'a unique prefix or "latest" will do); options given here override them.',
)
app.command(cls=TypedNamesCommand)(
    with_parameters(
        run,
        [
            keyword_parameter("ctx", typer.Context),
            keyword_parameter("like", Annotated[str | None, _LIKE], None),
            keyword_parameter("require", RequireOption, None),
            keyword_parameter("junit", JunitOption, None),
            *map(typer_parameter, _RUN_OPTIONS),
        ],
    )
)


def _execute(config: RunConfig, cases: list[Case], resume: str, ci: CiOptions) -> None:
    """Run the flow for ``config`` (whose preflight found ``cases``), then print the
    report and the files written; ``resume`` is the command that resumes it."""
    from critiquebench._cli._interrupt import INTERRUPTED_EXIT
    from critiquebench.pipeline import stop_requested
    from critiquebench.runtime.prefect_env import configure_prefect_environment

    if stop_requested(config.output, config.run_id):  # Ctrl-C during the checks
        _error("interrupted", f"run {config.run_id} did not start; start it with: {resume}")
        raise typer.Exit(code=INTERRUPTED_EXIT)
    from critiquebench.runtime.prefect_server import local_prefect_api

    # Prefect's temporary server cannot create its database in a missing folder.
    configure_prefect_environment(default_prefect_home()).mkdir(parents=True, exist_ok=True)
    # The temporary Prefect API starts first, so its start-up overlaps the imports and the
    # judge's start (its sandbox worker, mypy daemon and ruff server: ``warm_start``).
    with local_prefect_api() as server:
        from critiquebench.pipeline import RunIncomplete, RunInterrupted, import_loop, warm_start

        warm_start(config)
        # Computed while the server starts (it is not waited for yet): no thread needed.
        note = _design(config, cases)
        from flows.ab_matrix import run_ab_matrix  # imported late: Prefect reads its env

        # LangGraph too, here rather than in the flow's start, after the server answered;
        # after warm_start, whose judge's children then start before this import.
        import_loop()

        console.print(
            f"run {config.run_id}: suite {config.suite}, arms {','.join(config.arms)}, "
            f"reps {config.reps}, model {config.model}, retry limit {config.retry_limit}"
        )
        if server.process is None:
            console.print(f"Prefect API: {server.api_url} (already running)")
        if note is not None:
            console.print(note.line(), markup=False, highlight=False, soft_wrap=True)
        problem: Exception | None = None
        try:
            server.wait_ready()
            with server.applied():
                run_ab_matrix(config)
        except RunInterrupted as stopped:
            # No report: a verdict on part of the matrix would look final.
            sys.stdout.flush()
            _error("interrupted", f"{str(stopped).split(';')[0]}; resume with: {resume}")
            raise typer.Exit(code=INTERRUPTED_EXIT) from None
        except Exception as exc:  # failed units or failed quality checks: report what landed
            problem = exc
        # A flow that finished wrote report.json: print those numbers, do not compute them
        # again. One that stopped early may not have, so build the report from what landed.
        built = _flow_report(config.output, config.run_id) if problem is None else None
        if built is None and problem is not None and not _has_results(config):
            # Nothing landed (the Prefect API never answered, say): the cause, not
            # "no results", is what the user needs.
            _error("the run did not finish cleanly", str(problem))
            raise typer.Exit(code=1)
        report = built or _write_reports(
            config.output, config.run_id, _run_prices(config), config.target
        )
        _print_report(report)
        if note is not None:  # with the verdict, which it explains
            console.print(note.line(), markup=False, highlight=False, soft_wrap=True)
        _print_files(config.output / config.run_id)
        code = _finish_ci(report, ci)
        # Prefect's shutdown of its temporary server can end the process without the
        # usual buffer flush; a report that never reaches a redirected file is useless.
        sys.stdout.flush()
    if isinstance(problem, RunIncomplete):
        _error("incomplete", str(problem))
        raise typer.Exit(code=3)
    if problem is None and code:
        raise typer.Exit(code=code)
    if problem is not None:
        _error("the run did not finish cleanly", str(problem))
        raise typer.Exit(code=1)


def _design(config: RunConfig, cases: list[Case]) -> DesignNote | None:
    """Whether the design can decide (``design_note``; about a CPU-second); None for a
    run with no arm compared with the baseline.

    Not on a thread of its own (as it was until issue 25's rule): ``run`` computes it
    after Prefect's temporary server was spawned and before waiting for it, so it
    overlaps the server's start-up (seconds) as the thread did.
    """
    if len(config.arm_names) < 2 or not cases:
        return None
    from critiquebench._cli._design import compared_cases, design_note

    return design_note(compared_cases(cases), config.reps, config.retry_limit, config.target)


def _has_results(config: RunConfig) -> bool:
    """Whether any unit of the run has its cases row."""
    cases = config.output / config.run_id / "cases"
    return cases.is_dir() and any(cases.glob("*.parquet"))


def _run_prices(config: RunConfig) -> PriceTable | None:
    """The table this run prices with: the one its first start stored, else its file."""
    recorded = _recorded_prices(config.output, config.run_id)
    return recorded.table if recorded is not None else _load_prices(config.prices)


def _print_files(run_dir: Root) -> None:
    console.print(f"\nFiles written under {run_dir}:")
    for table in ("runs", "cases", "attempts", "calls", "transcripts"):
        count = len(list((run_dir / table).glob("*.parquet")))
        console.print(f"  {run_dir / table}/  ({count} Parquet file(s))")
    for name in _REPORT_FILES:
        if (run_dir / name).exists():
            console.print(f"  {run_dir / name}")
    escalations = run_dir / "escalations"
    if escalations.exists():
        console.print(f"  {escalations}/  ({len(list(escalations.glob('*.md')))} record(s))")
    from critiquebench.analysis import LESSONS_FILE

    if (run_dir.parent / LESSONS_FILE).exists():
        console.print(f"  {run_dir.parent / LESSONS_FILE}  (lessons across runs)")


class OutputFormat(StrEnum):
    """How a command prints its result."""

    text = "text"
    json = "json"


FormatOption = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        help="text: the table for people; json: one JSON document on stdout, for scripts.",
    ),
]


@app.command("list")
def list_runs(output: OutputOption = None, format_: FormatOption = OutputFormat.text) -> None:
    """List the runs under --output, newest first, with their status and verdict.

    Columns: id, start (UTC), status, suite, model, arms, units landed/planned and
    the verdict of the run's report.
    A run whose process ended without recording its end (killed, crashed) shows
    status ``died``; rerun it with ``critiquebench resume RUN``.
    """
    from critiquebench._cli._runs import listed_runs, runs_json, runs_table

    folder: Root = _setting("output", output)
    runs = listed_runs(folder)
    if format_ is OutputFormat.json:
        sys.stdout.write(runs_json(runs))
        return
    if not runs:
        console.print(f"no runs under {folder}", markup=False, highlight=False)
        return
    console.print(runs_table(runs))


@app.command()
def report(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help=f"The run to report on: {RUN_REF}.")],
    output: OutputOption = None,
    prices: PricesOption = None,
    target: TargetOption = TARGET_DEFAULT,
    format_: FormatOption = OutputFormat.text,
    require: RequireOption = None,
    junit: JunitOption = None,
) -> None:
    """Rebuild the report of a landed run from its Parquet files alone.

    Prints the per-arm table (--format json: the report.json content) and writes
    report.json, report.html and lessons.md into the run folder. Without --prices and
    --target, those the run was started with. --require and --junit work as for `run`.
    """
    folder: Root = _setting("output", output)
    _setting("target", target)  # a bad --target is refused whatever the run
    run_id = _resolve(folder, run_id)
    given = _given(ctx, {"prices": prices, "target": target})
    price_table, goal = _run_settings(folder, run_id, given, target)
    built = _write_reports(folder, run_id, price_table, goal)
    if format_ is OutputFormat.json:
        sys.stdout.write(built.to_json())
        sys.stdout.flush()
        raise typer.Exit(code=_finish_ci(built, CiOptions(require, junit), say=False))
    _print_report(built)
    run_dir = folder / run_id
    console.print("\n" + "\n".join(str(run_dir / name) for name in _REPORT_FILES))
    from critiquebench.analysis import LESSONS_FILE

    console.print(f"{folder / LESSONS_FILE}  (lessons across runs)")
    raise typer.Exit(code=_finish_ci(built, CiOptions(require, junit)))


@app.command()
def compare(
    ctx: typer.Context,
    run_a: Annotated[str, typer.Argument(help=f"First run (e.g. one model): {RUN_REF}.")],
    run_b: Annotated[str, typer.Argument(help=f"Second run (e.g. another model): {RUN_REF}.")],
    output: OutputOption = None,
    prices: PricesOption = None,
    target: TargetOption = TARGET_DEFAULT,
    intersect: Annotated[
        bool,
        typer.Option(
            "--intersect", help="Pair only the units both runs have when their case sets differ."
        ),
    ] = False,
    format_: FormatOption = OutputFormat.text,
) -> None:
    """Compare two runs arm by arm: defects, reduction, pass rate, latency, cost, then
    the paired difference (B minus A, unit by unit) with its interval, McNemar over
    cases and the cases that flipped.

    Each run is reported with its own price table and target unless --prices or
    --target is given. Runs of different suites or case sets are refused unless
    --intersect. --format json prints {"runs": [report A, report B], "paired": ...},
    each report the content of a report.json.
    """
    from critiquebench.analysis import (
        PairingRefused,
        build_report,
        comparison_json,
        comparison_table,
        connect,
        paired_comparison,
        paired_table,
    )

    folder: Root = _setting("output", output)
    run_a, run_b = _resolve(folder, run_a), _resolve(folder, run_b)
    given = _given(ctx, {"prices": prices, "target": target})
    connection = connect(folder, [run_a, run_b], snapshot=True)
    reports, tables = [], {}
    for run in (run_a, run_b):
        price_table, goal = _run_settings(folder, run, given, target)
        tables[run] = price_table
        reports.append(build_report(connection, run, prices=price_table, target=goal))
    for run, built in zip((run_a, run_b), reports, strict=True):
        if not built.arms:
            raise _fail(f"no results for run {run!r} under {folder}")
    try:
        paired = paired_comparison(connection, run_a, run_b, prices=tables, intersect=intersect)
    except PairingRefused as exc:
        raise _fail(str(exc)) from None
    if format_ is OutputFormat.json:
        from critiquebench._cli._machine import compare_json

        sys.stdout.write(compare_json(reports[0], reports[1], comparison_json(paired)))
        return
    console.print(comparison_table(reports[0], reports[1]))
    console.print(paired_table(paired))


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="The run.")],
    case_id: Annotated[
        str | None, typer.Argument(help="The case; omit to list the run's units.")
    ] = None,
    arm: Annotated[
        str | None, typer.Option("--arm", help="One arm; omit for every arm side by side.")
    ] = None,
    rep: Annotated[int, typer.Option("--rep", help="The repetition, from 0.")] = 0,
    output: OutputOption = None,
) -> None:
    """Print one unit's story: each round's prompt, answer, checks, critic and diff."""
    from critiquebench.analysis import (
        StoryError,
        load_stories,
        render_side_by_side,
        render_story,
        render_units,
        unit_list,
    )

    folder: Root = _setting("output", output)
    try:
        if case_id is None:
            console.print(render_units(unit_list(folder, run_id), run_id))
            return
        stories = load_stories(folder, run_id, case_id, arm, rep)
    except StoryError as exc:
        raise _fail(str(exc)) from None
    if len(stories) == 1:
        console.print(render_story(stories[0]))
    else:
        console.print(render_side_by_side(stories))


import_app = typer.Typer(
    help="Turn another harness's results into a replay file, to judge them as an arm.",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")
ReplayOut = Annotated[
    Path, typer.Option("--out", help="The replay file to write (JSONL; see --model replay:).")
]


def _imported(lines_of: Any, out: Path) -> None:
    from critiquebench.models import ReplayFormatError, write_replay_file

    try:
        written = write_replay_file(out, lines_of())
    except ReplayFormatError as exc:
        raise _fail(str(exc)) from None
    cases = len({case_id for case_id, _ in written.answers})
    console.print(
        f"wrote {out}: {len(written.answers)} line(s) for {cases} case(s); judge them with "
        f"critiquebench run --arms A --model replay:{out} --suite SUITE"
    )


@import_app.command("inspect")
def import_inspect(
    log: Annotated[Path, typer.Argument(help="An inspect_ai eval log (.eval or .json).")],
    out: ReplayOut,
) -> None:
    """An inspect_ai eval log: each sample's final answer, tokens and time (case id:
    the sample's metadata case_id, else its id; rep: its epoch less one)."""
    from critiquebench.models import inspect_replay_lines

    _imported(lambda: inspect_replay_lines(log), out)


@import_app.command("promptfoo")
def import_promptfoo(
    file: Annotated[Path, typer.Argument(help="The JSON of `promptfoo eval -o FILE.json`.")],
    out: ReplayOut,
    provider: Annotated[
        str | None, typer.Option("--provider", help="The provider to import, if several.")
    ] = None,
) -> None:
    """A promptfoo output file: each result's output, tokens and latency (case id: the
    test's case_id var)."""
    from critiquebench.models import promptfoo_replay_lines

    _imported(lambda: promptfoo_replay_lines(file, provider), out)


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
    from critiquebench.critics import run_quorum_cli

    text = sys.stdin.read() if stdin else None
    printed, code = run_quorum_cli(None if stdin else list(vote_files or []), text, threshold)
    console.print(printed, highlight=False, markup=False)
    raise typer.Exit(code=code)


@app.command("validate-suite")
def validate_suite(
    suite: Annotated[
        str, typer.Argument(help="A bundled suite (see docs/suites.md) or a JSONL suite file.")
    ],
    references: Annotated[
        bool,
        typer.Option(
            "--references/--no-references",
            help="Run every reference_solution through its case's judge (~50 ms per case).",
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
    if not found.unusable_file:  # a folder or an empty file: its one line says it all
        console.print(found.summary(), markup=False, highlight=False, soft_wrap=True)
    if found.of_kind("format"):
        raise typer.Exit(code=2)
    if not found.ok(strict=strict):
        raise typer.Exit(code=1)


def _sql_error(error: Exception) -> str:
    """DuckDB's message on one line, saying why a refused statement was refused."""
    import duckdb

    from critiquebench._cli._errors import first_line_and_hints

    first = first_line_and_hints(error)
    refused = isinstance(error, duckdb.PermissionException) or "read-only mode" in first
    if refused:
        first += " (`critiquebench sql` is read-only: it reads only the run's tables)"
    return first


SQL_VIEWS = (
    *("runs", "cases", "attempts", "calls", "transcripts"),
    *("findings", "defects_by_kind", "trigger_decisions", "fix_break", "canaries"),
    "critic_accuracy",
)
"""The views ``critiquebench sql`` offers (named here: the CLI does not import DuckDB to
say so; a test checks them against the views ``connect`` creates)."""


@app.command()
def sql(
    query: Annotated[
        str | None,
        typer.Argument(help=f"SQL over the views {', '.join(SQL_VIEWS)}; omit for help."),
    ] = None,
    output: OutputOption = None,
    max_rows: Annotated[int, typer.Option(min=1, help="Print at most this many rows.")] = 100,
    run: Annotated[
        list[str] | None,
        typer.Option(
            help="Only this run's tables (an id, a unique prefix or 'latest'; repeat for "
            "several); default: every run."
        ),
    ] = None,
) -> None:
    """Run a read-only SQL query over the runs' tables, or show how to open a session."""
    import duckdb

    from critiquebench.analysis import interactive_help, query_table

    folder: Root = _setting("output", output)
    if run:
        run = [_resolve(folder, ref, "--run") for ref in run]
    if query is None:
        # soft_wrap: the commands must stay on one line to be copied; markup off for paths.
        console.print(interactive_help(folder, run), markup=False, highlight=False, soft_wrap=True)
        return
    try:
        table, note = query_table(folder, query, max_rows=max_rows, runs=run)
    except duckdb.Error as exc:
        raise _fail(f"query failed: {_sql_error(exc)}") from None
    console.print(table)
    console.print(note, markup=False, emoji=False, highlight=False)


@app.command()
def check(
    run_id: Annotated[str, typer.Argument(help=f"The run to check: {RUN_REF}.")],
    output: OutputOption = None,
    format_: FormatOption = OutputFormat.text,
) -> None:
    """Check a landed run's tables against the data-quality expectations (exit 1 on failure).

    --format json prints the outcome of every expectation and the units not measured.
    """
    # Imported here: Great Expectations takes seconds to import; only this command needs it.
    from critiquebench.quality import check_command

    folder: Root = _setting("output", output)
    run_id = _resolve(folder, run_id)
    if format_ is OutputFormat.json:
        from critiquebench._cli._machine import check_json
        from critiquebench.quality import check_run

        found = check_run(folder, run_id)
        sys.stdout.write(check_json(found))
        raise typer.Exit(code=0 if found.passed and found.complete else 1)
    code = check_command(run_id, folder)
    _print_sensitivity(folder, run_id)
    raise typer.Exit(code=code)


def _print_sensitivity(folder: Root, run_id: str) -> None:
    """The run's report.json, while it has units not measured: each arm's reduction
    with them counted as failures (the check's verdict is inconclusive already)."""
    from critiquebench.analysis import sensitivity_lines

    report = _flow_report(folder, run_id)
    lines = sensitivity_lines(report) if report is not None else []
    if lines:
        console.print(f"From {folder / run_id / 'report.json'}:", highlight=False, markup=False)
    for line in lines:
        console.print(line, highlight=False, markup=False)


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
    target: TargetOption = TARGET_DEFAULT,
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
    from critiquebench.analysis import (
        SelftestSettings,
        run_selftest,
        selftest_table,
        simulate_selftest,
    )
    from critiquebench.models import SimParams, SimSpecError

    goal: float = _setting("target", target)
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
            retry_limit=retry_limit, target=goal, first_seed=seed,
        )  # fmt: skip
        results.append(run_selftest(settings))
        if statistical:
            bulk = SelftestSettings(
                params=params, experiments=statistical, reps=count, retry_limit=retry_limit,
                target=goal, first_seed=seed, resamples=1_000,
            )  # fmt: skip
            results.append(simulate_selftest(bulk, n_cases=results[-1].outcomes[0].n_cases))
    console.print(selftest_table(results))


@app.command()
def power(
    effect: Annotated[float, typer.Option(help="The true defect reduction to plant.")],
    target_option: TargetOption = TARGET_DEFAULT,
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
    from critiquebench.analysis import (
        estimate_power,
        min_cases_for_power,
        params_for_effect,
        power_table,
    )
    from critiquebench.models import SimParams, SimSpecError

    target: float = _setting("target", target_option)
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


@app.command()
def server(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 for the Prefect API and UI.")] = 4200,
) -> None:
    """Keep a Prefect server running for this project, so runs start without one.

    Runs started in this project while it answers report to it (and show in its UI)
    instead of starting a temporary server each. Stop it with Ctrl-C (or SIGTERM).
    """
    from critiquebench.runtime.prefect_env import configure_prefect_environment
    from critiquebench.runtime.prefect_server import serve_standing

    home = configure_prefect_environment(default_prefect_home())
    home.mkdir(parents=True, exist_ok=True)

    def announce(api_url: str) -> None:
        console.print(f"Prefect API {api_url} (UI at {api_url.removesuffix('/api')})")
        console.print("runs of this project report here while it runs; Ctrl-C stops it")
        sys.stdout.flush()

    try:
        code = serve_standing(home, port, announce)
    except KeyboardInterrupt:
        raise typer.Exit(code=0) from None
    except RuntimeError as exc:
        raise _fail(str(exc)) from None
    if code:
        raise _fail(f"the Prefect server ended with code {code}")


DEBUG_VARIABLE = "CRITIQUEBENCH_DEBUG"
"""Set (to anything but empty) to see the traceback of an unexpected error."""


def main() -> None:
    """Entry point of the ``critiquebench`` script.

    An error no command expected is printed as one line (exit 1): a damaged Parquet
    file, say, names the file; ``CRITIQUEBENCH_DEBUG=1`` shows the traceback instead.
    """
    import os

    try:
        app()
    except SystemExit as done:
        code = done.code
    except Exception as exc:
        if os.environ.get(DEBUG_VARIABLE):
            raise
        from critiquebench._cli._errors import one_line

        _error("error", one_line(exc, DEBUG_VARIABLE))
        code = 1
    else:
        code = 0
    sys.exit(code)  # a message (not an int) goes to stderr: Python prints it
