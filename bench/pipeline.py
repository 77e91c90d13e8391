"""Pipeline overhead: `critiquebench run` (the Prefect flow) against the library loop.

The workload is HumanEval x arms A, B x 3 reps on a replay model that answers
instantly: every first draft raises, every fix is the canonical solution, so arm B
fixes on its first round. Each measurement runs in a fresh process into a fresh
output folder (no call cache), at concurrency 1, 2 and 4:

- flow: `critiquebench run` as a user calls it (CLI import, temporary Prefect
  server, the ab-matrix flow, data-quality check, reports, printing, shutdown);
- library: `start_run`, then `run_unit` (execute_unit + write_unit) on a thread pool
  of N workers, then `finish_run` (no quality check, no report).

wall s = process start to exit. overhead share = (wall - (judge + model) / N) / wall,
with judge and model time summed from the run's own `cases` rows. The units phase
(the start's runs row to the last unit written) gets the same share, without the
fixed costs before and after it. Fixed-cost phases
of the flow come from timestamps the run records (runs.invocation_started_at and
finished_at, the last cases.finished_at) and three taken by the process (imported,
CLI returned, exited). Peak RSS is the run's process (not the Prefect server); the
flow's data-quality check and reports run in child processes, whose peaks are printed apart.
Every peak is the process's own VmHWM (see critiquebench.runtime.peak_memory): ru_maxrss would
carry over the high-water mark of the process that spawned it. CPU s is user + sys of
the run's process and every process under it, counting the sandbox workers and the
mypy and ruff servers it leaves running when it exits (the parent's wait4 does not).

``--targets`` prints issue 24's figures instead, each against its target:

- slope per unit and fixed cost, flow and library loop at concurrency 2, from runs at
  1 and 3 reps (wall = fixed + slope x units), the flow with its temporary Prefect
  server and with a standing one (``critiquebench server``);
- ``report``, ``check`` and one ``sql`` query, as a user types them, on a run of 328
  units (HumanEval x A, B x 1 rep) and one of 3,280 (10 reps);
- the library loop on a model whose calls take 0.5 s (``sim:latency=0.5``) at
  concurrency 4, 16 and 64: efficiency = units/s in the units phase over the ideal
  (concurrency / model seconds per unit).

``--api-bound`` prints only that efficiency, for ``--paths`` and ``--concurrency``,
``--pairs`` times in turn, with two more columns: the span (the first unit's start to
the last unit's end, without the sandbox probe that the units phase begins with) and
the run process's own CPU (its threads: the Python work that one interpreter lock
serialises). ``--judge-rate R`` caps the ideal at the judge's own rate, R attempts/s
(``bench/judge.py --threads 2``) over the run's attempts per unit; ``--judge-threads N``
measures that rate on N threads just before each run instead, at the load the run meets.

``--ab VARIANT`` measures what one speed mechanism gains: each run with every mechanism
on, then with VARIANT's off (see ``VARIANTS``), in turn, ``--pairs`` times; on the
replay run, or on the 0.5 s calls with ``--api-bound``.

Run: .venv/bin/python bench/pipeline.py            (164 cases, 984 units per run)
     .venv/bin/python bench/pipeline.py --quick    (20 cases, for development)
     .venv/bin/python bench/pipeline.py --targets  (issue 24's table; --quick too)
     .venv/bin/python bench/pipeline.py --api-bound --paths library,flow --concurrency 4,16,64
     .venv/bin/python bench/pipeline.py --ab batch-mypy --quick --paths library --concurrency 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CLI = str(Path(sys.executable).with_name("critiquebench"))
_DRAFT = '\n\n\ndef {name}(*args, **kwargs):\n    raise ValueError("first draft")\n'


@dataclass(frozen=True)
class Measured:
    """One run of one path at one concurrency."""

    path: str
    concurrency: int
    wall_s: float
    cpu_s: float
    units: int
    judge_calls: int
    judge_s: float
    model_s: float
    peak_rss_mib: float
    phases: dict[str, float]
    children_peak_rss_mib: dict[str, float] | None = None
    """The flow's child processes: the quality check's and the reports'."""
    model_calls: int = 0
    self_cpu_s: float = 0.0
    """CPU of the run's own process alone (its threads), without its children."""

    @property
    def overhead_share(self) -> float:
        return (self.wall_s - (self.judge_s + self.model_s) / self.concurrency) / self.wall_s


def write_replay(path: Path, limit: int | None) -> None:
    """A wrong first draft (it raises) and the canonical solution as the first fix."""
    from critiquebench.suites import load_suite

    lines = []
    for case in load_suite("humaneval", limit=limit):
        fixed = case.reference_solution or ""
        draft = fixed + _DRAFT.format(name=case.entry_point)
        answers = [f"```python\n{draft}\n```", f"```python\n{fixed}\n```"]
        lines.append(json.dumps({"case_id": case.id, "answers": answers}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "suite": "humaneval",
        "limit": args.limit,
        "arms": "A,B",
        "reps": args.reps,
        "model": getattr(args, "model", None) or f"replay:{args.replay}",
        "max_concurrency": args.concurrency,
        "output": args.output,
        "run_id": "bench",
        "cache": False,
    }


def child_flow(args: argparse.Namespace) -> dict[str, Any]:
    """`critiquebench run ...` in this process, as the console script would run it."""
    from critiquebench.cli import app
    from critiquebench.runtime.warm_child import ChildResult, WarmChild

    imported = time.time()
    children: dict[str, float] = {}
    result = WarmChild.result

    def recorded(self: WarmChild[Any], timeout_s: float | None = None) -> ChildResult[Any]:
        done = result(self, timeout_s)  # the quality check's and the reports' child
        name = "quality" if "great_expectations" in self.modules else "reports"
        children[name] = done.peak_rss_mib
        return done

    WarmChild.result = recorded  # type: ignore[method-assign]
    settings = _settings(args)
    argv = ["run", "--suite", "humaneval", "--arms", "A,B", "--reps", str(args.reps)]
    argv += ["--model", settings["model"], "--max-concurrency", str(args.concurrency)]
    argv += ["--output", str(args.output), "--run-id", "bench", "--no-cache"]
    argv += ["--limit", str(args.limit)] if args.limit else []
    # A failed run must not pass as a measurement: outside standalone mode Click returns
    # typer.Exit's code instead of raising it.
    code = app(argv, standalone_mode=False)
    if code:
        raise SystemExit(code)
    return {"imported": imported, "children_peak_rss_mib": children}


def child_library(args: argparse.Namespace) -> dict[str, Any]:
    """start_run, run_unit on a thread pool, finish_run: the loop without Prefect."""
    from concurrent.futures import ThreadPoolExecutor

    from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run

    imported = time.time()
    config = RunConfig.model_validate(_settings(args))
    plan = start_run(config)
    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        list(pool.map(lambda work: run_unit(work[0], work[1], config), plan.work))
    finish_run(plan, failed=0)
    return {"imported": imported}


VARIANTS = ("pool-unbounded", "fresh-sandbox", "batch-mypy", "batch1", "report-inline")
"""Speed mechanisms turned off, one at a time, to measure what each gains: the sandbox
pool's bound, warm sandbox workers (a fresh one per attempt), mypy's update loop (a batch
``mypy`` process per text, same flags and cache), unit batches (one unit per flow task)
and the report's warm child (the flow builds the report in its own process after the
check)."""


def _batch_mypy(checker: Any, code: str) -> Any:
    """mypy's findings of ``code`` from a fresh ``mypy`` process (the daemon's flags)."""
    from critiquebench.judges.static import _checker
    from critiquebench.runtime.project import default_cache_dir

    folder = Path(tempfile.mkdtemp(prefix="cb-batch-mypy-"))
    try:
        path = folder / "candidate.py"
        path.write_text(code, encoding="utf-8")
        cache = default_cache_dir() / _checker.MYPY_CACHE_FOLDER
        command = [sys.executable, "-m", "mypy", *checker.settings.mypy_flags]
        command += ["--cache-dir", str(cache), str(path)]
        done = subprocess.run(command, capture_output=True, text=True, cwd=folder, check=False)
        return _checker.parse_mypy(done.stdout.replace(str(path), "candidate.py"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _apply_variant(name: str) -> None:
    """Turn one speed mechanism off in this (child) process."""
    from critiquebench.judges.sandbox import _pool

    if name == "pool-unbounded":
        _pool.default_pool_size = lambda: None  # type: ignore[assignment,return-value]
    elif name == "fresh-sandbox":
        _pool.Sandbox._release = _pool.Sandbox._discard  # type: ignore[method-assign]
    elif name == "batch-mypy":
        from critiquebench.judges.static._checker import StaticChecker

        StaticChecker._mypy = _batch_mypy  # type: ignore[method-assign,assignment]
    elif name == "batch1":
        import functools

        import flows.ab_matrix

        batches = functools.partial(flows.ab_matrix.unit_batches, max_batch=1)
        flows.ab_matrix.unit_batches = batches  # type: ignore[attr-defined]
    elif name == "report-inline":
        import flows.ab_matrix

        write_reports = flows.ab_matrix.write_reports_task

        class NoChild:
            """Starts no child: the report is built by the flow itself."""

            def __init__(self, nice: int = 0) -> None:
                del nice

            def prepare(self, *_: object) -> None:
                pass

            def close(self) -> None:
                pass

        def inline(*args: Any, pending: object = None, **kwargs: Any) -> Any:
            del pending
            return write_reports(*args, **kwargs)

        flows.ab_matrix.PendingReport = NoChild  # type: ignore[attr-defined,misc,assignment]
        flows.ab_matrix.write_reports_task = inline  # type: ignore[attr-defined]


def _child(args: argparse.Namespace) -> None:
    if args.variant:
        _apply_variant(args.variant)
    stamps = (child_flow if args.child == "flow" else child_library)(args)
    stamps["returned"] = time.time()
    from critiquebench.runtime.peak_memory import peak_rss_mib

    stamps["peak_rss_mib"] = peak_rss_mib()
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    stamps["self_cpu_s"] = own.ru_utime + own.ru_stime
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    stamps["all_cpu_s"] = (
        stamps["self_cpu_s"] + reaped.ru_utime + reaped.ru_stime + _live_descendants_cpu_s()
    )
    Path(args.stamps).write_text(json.dumps(stamps), encoding="utf-8")
    sys.stdout.flush()


def _live_descendants_cpu_s() -> float:
    """CPU seconds of this process's descendants still running (sandbox workers, mypy
    and ruff servers), each with the children it reaped: they are killed when this
    process exits, unwaited, so the parent's ``wait4`` never counts them."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        times[pid] = sum(int(value) for value in fields[11:15]) / ticks  # u, s, cu, cs
    ours = {os.getpid()}
    grew = True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in ours} - ours
        grew = bool(found)
        ours |= found
    return sum(times[pid] for pid in ours - {os.getpid()})


def _from_tables(output: Path) -> dict[str, Any]:
    """Units, judge and model time, and the run's own timestamps (epoch seconds)."""
    from critiquebench.analysis import connect

    db = connect(output)
    row = db.execute(
        "SELECT count(*), sum(judge_latency_s), sum(model_latency_s), "
        "epoch(max(finished_at)), min(epoch(finished_at) - wall_s), sum(calls) FROM cases"
    ).fetchone()
    judged = db.execute("SELECT count(*) FROM attempts").fetchone()
    run = db.execute(
        "SELECT epoch(min(invocation_started_at)), epoch(max(finished_at)) FROM runs"
    ).fetchone()
    assert row is not None and judged is not None and run is not None
    return {
        "units": row[0], "judge_s": row[1], "model_s": row[2], "last_unit": row[3],
        "first_unit": row[4], "model_calls": row[5],
        "judge_calls": judged[0], "started": run[0], "finished": run[1],
    }  # fmt: skip


def measure(
    args: argparse.Namespace, path: str, concurrency: int, scratch: Path, keep: Path | None = None
) -> Measured:
    """Run one path at one concurrency in a fresh process, into a fresh output folder
    (``keep``: this one, left in place)."""
    output = keep or scratch / f"{path}-{concurrency}-{time.monotonic_ns()}"
    stamps = output.with_suffix(".json")
    command = [sys.executable, __file__, "--child", path, "--concurrency", str(concurrency)]
    command += ["--reps", str(args.reps), "--replay", str(args.replay), "--output", str(output)]
    command += ["--stamps", str(stamps)] + (["--limit", str(args.limit)] if args.limit else [])
    command += ["--model", args.model] if getattr(args, "model", None) else []
    command += ["--variant", args.variant] if getattr(args, "variant", None) else []
    # This checkout's sources first, whichever copy the virtualenv was installed from.
    pythonpath = os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PREFECT_HOME": str(scratch / "prefect"), "PYTHONPATH": pythonpath}
    spawned = time.time()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    exited = time.time()
    if status != 0:
        raise SystemExit(f"{path} at concurrency {concurrency} failed (status {status})")
    times = {**json.loads(stamps.read_text(encoding="utf-8")), **_from_tables(output)}
    phases = {"start + import": times["imported"] - spawned}
    # From this start's runs row to the last unit written: what the units cost, without
    # the fixed costs around them (the library's includes the sandbox probe, after the
    # timestamp; `critiquebench run` probes while Prefect's server starts, before it).
    phases["units"] = times["last_unit"] - times["started"]
    # The first unit's start to the last unit's end: the units alone, without the probe.
    phases["unit span"] = times["last_unit"] - times["first_unit"]
    if path == "flow":
        phases["Prefect + flow start"] = times["started"] - times["imported"]
        phases["quality check"] = times["finished"] - times["last_unit"]
        phases["reports + printing"] = times["returned"] - times["finished"]
        phases["shutdown"] = exited - times["returned"]
    if keep is None:
        shutil.rmtree(output, ignore_errors=True)
    return Measured(
        path=path, concurrency=concurrency, wall_s=exited - spawned,
        # wait4 counts only the descendants the run waited for; those it leaves running
        # (sandbox workers, mypy, ruff) the child counted as it finished.
        cpu_s=max(usage.ru_utime + usage.ru_stime, float(times.get("all_cpu_s", 0.0))),
        units=int(times["units"]),
        judge_calls=int(times["judge_calls"]), judge_s=float(times["judge_s"]),
        model_s=float(times["model_s"]), peak_rss_mib=float(times["peak_rss_mib"]), phases=phases,
        children_peak_rss_mib=times.get("children_peak_rss_mib"),
        model_calls=int(times["model_calls"]),
        self_cpu_s=float(times.get("self_cpu_s", 0.0)),
    )  # fmt: skip


def print_table(results: list[Measured]) -> None:
    """The issue's table, plus CPU time (this process tree) and peak RSS."""
    columns = ["path", "conc.", "wall s", "units/s", "judge ms/call", "overhead share"]
    print("| " + " | ".join([*columns, "CPU s", "peak RSS MiB"]) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        name = "`critiquebench run`" if r.path == "flow" else "library loop"
        print(
            f"| {name} | {r.concurrency} | {r.wall_s:.1f} | {r.units / r.wall_s:.1f} "
            f"| {1000 * r.judge_s / max(r.judge_calls, 1):.0f} | {100 * r.overhead_share:.0f}% "
            f"| {r.cpu_s:.1f} | {r.peak_rss_mib:.0f} |"
        )
    by = {(r.path, r.concurrency): r for r in results}
    for path in ("flow", "library"):
        one, two = by.get((path, 1)), by.get((path, 2))
        if one and two:
            print(f"{path}: scaling 1 -> 2 workers {one.wall_s / two.wall_s:.2f}x")
    for n in (1, 2, 4):
        flow, library = by.get(("flow", n)), by.get(("library", n))
        if flow and library:
            print(f"concurrency {n}: flow / library wall = {flow.wall_s / library.wall_s:.2f}")
    for path in ("flow", "library"):
        one, two = by.get((path, 1)), by.get((path, 2))
        if one and two:
            ratio = one.phases["units"] / two.phases["units"]
            print(f"{path}: units phase scaling 1 -> 2 workers {ratio:.2f}x")
    for r in results:
        units = r.phases["units"]
        share = (units - (r.judge_s + r.model_s) / r.concurrency) / units
        print(
            f"units phase, {r.path} at {r.concurrency}: {units:.1f} s of {r.wall_s:.1f}, "
            f"overhead share {100 * share:.0f}%"
        )
    for r in results:
        if r.path == "flow":
            fixed = {name: s for name, s in r.phases.items() if name not in ("units", "unit span")}
            cells = ", ".join(f"{name} {seconds:.1f}" for name, seconds in fixed.items())
            print(f"fixed costs, flow at {r.concurrency}: {cells} s")
            children = ", ".join(
                f"{k} child {v:.0f}" for k, v in (r.children_peak_rss_mib or {}).items()
            )
            print(f"peak RSS MiB, flow at {r.concurrency}: run {r.peak_rss_mib:.0f}, {children}")


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def _line(figure: str, value: str, target: str) -> None:
    print(f"| {figure} | {value} | {target} | {_load()} |", flush=True)


def _fit(args: argparse.Namespace, path: str, scratch: Path) -> tuple[float, float]:
    """Fixed seconds and seconds per unit of ``path`` at concurrency 2, from 1 and 3 reps."""
    small = measure(argparse.Namespace(**{**vars(args), "reps": 1}), path, 2, scratch)
    large = measure(argparse.Namespace(**{**vars(args), "reps": 3}), path, 2, scratch)
    slope = (large.wall_s - small.wall_s) / (large.units - small.units)
    return small.wall_s - slope * small.units, slope


def _standing_server(scratch: Path) -> subprocess.Popen[bytes]:
    """`critiquebench server` on a free port for the bench's Prefect home, once it answers."""
    from critiquebench.runtime.prefect_server import standing_api

    home = scratch / "prefect"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    command = [CLI, "server", "--port", str(port)]
    pythonpath = os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])
    server = subprocess.Popen(
        command, cwd=scratch, env={**env, "PYTHONPATH": pythonpath}, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 600
    while standing_api(home) is None:
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the standing Prefect server did not start")
        time.sleep(0.5)
    return server


def _command_s(argv: list[str], output: Path) -> float:
    """Wall seconds of one `critiquebench` command, as a user types it."""
    pythonpath = os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])
    command = [CLI, *argv, "--output", str(output)]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=output, env={**os.environ, "PYTHONPATH": pythonpath},
        capture_output=True, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):  # check and report exit 1 on a failed gate only
        raise SystemExit(f"{argv[0]} failed: {done.stderr.decode()[-500:]}")
    return seconds


def _api_bound(args: argparse.Namespace, concurrency: int, scratch: Path) -> float:
    """Efficiency of the library loop on 0.5 s model calls at ``concurrency``."""
    done = measure(_api_settings(args, concurrency), "library", concurrency, scratch)
    ideal = concurrency / (done.model_s / done.units)
    return done.units / done.phases["units"] / ideal


def _api_settings(args: argparse.Namespace, concurrency: int) -> argparse.Namespace:
    """The 0.5 s-call run at ``concurrency``: ~3 cases per worker, or ``--limit`` cases."""
    limit = min(164, max(10, 3 * concurrency)) if not args.quick else min(20, 3 * concurrency)
    limit = getattr(args, "api_limit", None) or limit
    settings = {"limit": limit, "reps": 1, "model": "sim:latency=0.5,suite=humaneval"}
    return argparse.Namespace(**{**vars(args), **settings})


def _judge_rate(args: argparse.Namespace) -> float:
    """The full judge's attempts/s on ``--judge-threads`` threads, measured now (so at
    the load the next run meets): ``bench/judge.py --threads``, one round of 200."""
    command = [sys.executable, str(ROOT / "bench" / "judge.py"), "--threads"]
    command += [str(args.judge_threads), "--attempts", "200", "--rounds", "1"]
    pythonpath = os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        command, cwd=ROOT, env={**os.environ, "PYTHONPATH": pythonpath},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(done.stdout.rsplit("best: ", 1)[1].split()[0])


def print_api_bound(args: argparse.Namespace, scratch: Path) -> None:
    """The 0.5 s-call runs at each concurrency and path, repeated ``--pairs`` times in
    turn, each against its ideal: concurrency / model seconds per unit, capped by the
    judge's own rate (``--judge-rate`` attempts/s, from ``bench/judge.py --threads``)."""
    levels = [int(n) for n in args.concurrency.split(",")]
    paths = args.paths.split(",")
    if "flow" in paths:  # a first flow run migrates the new Prefect home: not measured
        measure(argparse.Namespace(**{**vars(args), "limit": 1, "reps": 1}), "flow", 1, scratch)
    print("| path | conc. | units | calls/unit | attempts/unit | units phase s | span s "
          "| units/s | ideal | efficiency | span eff. | CPU s | own CPU s | load |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for _ in range(args.pairs):
        for concurrency in levels:
            for path in paths:
                judge_rate = args.judge_rate or (_judge_rate(args) if args.judge_threads else 0)
                done = measure(_api_settings(args, concurrency), path, concurrency, scratch)
                per_unit = done.model_s / done.units
                ideal = concurrency / per_unit
                if judge_rate:
                    ideal = min(ideal, judge_rate / (done.judge_calls / done.units))
                    print(f"judge alone: {judge_rate:.1f} attempts/s ({_load()})", flush=True)
                rate = done.units / done.phases["units"]
                span_rate = done.units / done.phases["unit span"]
                calls, attempts = done.model_calls / done.units, done.judge_calls / done.units
                print(
                    f"| {path} | {concurrency} | {done.units} | {calls:.2f} "
                    f"| {attempts:.2f} | {done.phases['units']:.2f} "
                    f"| {done.phases['unit span']:.2f} | {rate:.1f} | {ideal:.1f} "
                    f"| {rate / ideal:.2f} | {span_rate / ideal:.2f} | {done.cpu_s:.1f} "
                    f"| {done.self_cpu_s:.1f} | {_load()} |",
                    flush=True,
                )


def print_ab(args: argparse.Namespace, scratch: Path) -> None:
    """``--ab VARIANT``: the run with every mechanism on and with VARIANT's off, in turn,
    ``--pairs`` times, at each ``--concurrency`` and ``--paths``; on the replay run (or on
    0.5 s calls with ``--api-bound``). Prints each run and the medians."""
    import statistics

    levels = [int(n) for n in args.concurrency.split(",")]
    paths = args.paths.split(",")
    if "flow" in paths:  # a first flow run migrates the new Prefect home: not measured
        measure(argparse.Namespace(**{**vars(args), "limit": 1, "reps": 1}), "flow", 1, scratch)
    print("| path | conc. | variant | units | wall s | units phase s | span s | CPU s "
          "| own CPU s | efficiency | span eff. | load |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    runs: dict[tuple[str, int, str], list[Measured]] = {}
    for _ in range(args.pairs):
        for concurrency in levels:
            for path in paths:
                for variant in (None, args.ab):
                    settings = _api_settings(args, concurrency) if args.api_bound else args
                    settings = argparse.Namespace(**{**vars(settings), "variant": variant})
                    done = measure(settings, path, concurrency, scratch)
                    runs.setdefault((path, concurrency, variant or "on"), []).append(done)
                    # Over the ideal of model calls alone (concurrency / model s a unit).
                    ideal = concurrency * done.units / max(done.model_s, 1e-9)
                    print(
                        f"| {path} | {concurrency} | {variant or 'on'} | {done.units} "
                        f"| {done.wall_s:.2f} | {done.phases['units']:.2f} "
                        f"| {done.phases['unit span']:.2f} | {done.cpu_s:.1f} "
                        f"| {done.self_cpu_s:.1f} "
                        f"| {done.units / done.phases['units'] / ideal:.2f} "
                        f"| {done.units / done.phases['unit span'] / ideal:.2f} | {_load()} |",
                        flush=True,
                    )
    for (path, concurrency, variant), measured in runs.items():
        wall = statistics.median(r.wall_s for r in measured)
        span = statistics.median(r.phases["unit span"] for r in measured)
        cpu = statistics.median(r.cpu_s for r in measured)
        print(f"median {path} at {concurrency}, {variant}: wall {wall:.2f} s, unit span "
              f"{span:.2f} s, CPU {cpu:.1f} s ({len(measured)} runs)")  # fmt: skip


def print_targets(args: argparse.Namespace, scratch: Path) -> None:
    """Issue 24's table: each figure, its target and the load average when measured."""
    print(f"{os.cpu_count()} CPUs; the last column is the load average (1, 5, 15 min)\n")
    print("| figure | measured | target | load |\n|---|---|---|---|")
    measure(argparse.Namespace(**{**vars(args), "limit": 1, "reps": 1}), "flow", 1, scratch)
    library_fixed, library_slope = _fit(args, "library", scratch)
    flow_fixed, flow_slope = _fit(args, "flow", scratch)
    ratio = flow_slope / library_slope
    _line(
        "flow slope per unit vs library loop",
        f"{1000 * flow_slope:.1f} vs {1000 * library_slope:.1f} ms ({ratio:.2f}x)", "<= 1.15x",
    )  # fmt: skip
    _line("fixed cost, library loop", f"{library_fixed:.1f} s", "<= 3 s")
    _line("fixed cost, flow (temporary server)", f"{flow_fixed:.1f} s", "<= 8 s")
    server = _standing_server(scratch)
    try:
        standing_fixed, _ = _fit(args, "flow", scratch)
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait()
    _line(
        "fixed cost, flow (standing server)",
        f"{standing_fixed:.1f} s", f"<= library + 1 s = {library_fixed + 1:.1f} s",
    )  # fmt: skip
    targets = {1: ("<= 2 s", "<= 3 s", "<= 0.5 s"), 10: ("<= 3 s", "<= 5 s", "<= 1 s")}
    for reps, (report_target, check_target, sql_target) in targets.items():
        output = scratch / f"landed-{reps}"
        landed = argparse.Namespace(**{**vars(args), "reps": reps})
        units = measure(landed, "library", 2, scratch, keep=output).units
        report_s = _command_s(["report", "bench"], output)
        check_s = _command_s(["check", "bench"], output)
        sql_s = _command_s(["sql", "SELECT arm, count(*) FROM cases GROUP BY arm"], output)
        _line(f"`report`, {units} units", f"{report_s:.1f} s", report_target)
        _line(f"`check`, {units} units", f"{check_s:.1f} s", check_target)
        _line(f"one `sql` query, {units} units", f"{sql_s:.1f} s", sql_target)
        shutil.rmtree(output, ignore_errors=True)
    for concurrency in (4, 16, 64):
        efficiency = _api_bound(args, concurrency, scratch)
        _line(f"efficiency, 0.5 s calls, concurrency {concurrency}", f"{efficiency:.2f}", ">= 0.9")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 cases instead of 164")
    parser.add_argument("--limit", type=int, default=None, help="the first N HumanEval cases")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--paths", default="flow,library", help="flow, library or both")
    parser.add_argument("--concurrency", default="1,2,4", help="comma-separated worker counts")
    parser.add_argument("--targets", action="store_true", help="issue 24's figures")
    parser.add_argument(
        "--api-bound", action="store_true", help="only the 0.5 s-call efficiency, per path"
    )
    parser.add_argument(
        "--judge-threads", type=int, default=0,
        help="--api-bound: cap each ideal by the judge's rate on N threads, measured before it",
    )  # fmt: skip
    parser.add_argument("--ab", choices=VARIANTS, help="each run with VARIANT off, in turn")
    parser.add_argument("--api-limit", type=int, help="--api-bound: cases per run")
    parser.add_argument("--pairs", type=int, default=1, help="--api-bound: repetitions")
    parser.add_argument(
        "--judge-rate", type=float, default=0.0, help="--api-bound: the judge's attempts/s cap"
    )
    parser.add_argument("--child", choices=("flow", "library"), help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument(
        "--variant", choices=VARIANTS, help="turn one speed mechanism off (see VARIANTS)"
    )
    parser.add_argument("--replay", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--stamps", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.concurrency = int(args.concurrency)
        _child(args)
        return
    args.limit = args.limit or (20 if args.quick else None)
    scratch = Path(tempfile.mkdtemp(prefix="cb-bench-pipeline-"))
    try:
        args.replay = scratch / "replay.jsonl"
        write_replay(args.replay, args.limit)
        if args.targets:
            print_targets(args, scratch)
            return
        if args.ab:
            print_ab(args, scratch)
            return
        if args.api_bound:
            print_api_bound(args, scratch)
            return
        levels = [int(n) for n in args.concurrency.split(",")]
        paths = args.paths.split(",")
        if "flow" in paths:  # a first flow run migrates the new Prefect home: not measured
            measure(argparse.Namespace(**{**vars(args), "limit": 1, "reps": 1}), "flow", 1, scratch)
        print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
        results = [measure(args, path, n, scratch) for n in levels for path in paths]
        print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
        print(f"{results[0].units} units per run, {args.reps} reps, {os.cpu_count()} CPUs\n")
        print_table(results)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
