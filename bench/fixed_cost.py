"""The fixed cost of a run, phase by phase: a timeline of a tiny run.

A run of HumanEval/0 x arms A, B x 1 rep (2 units) on the replay model of
``bench/pipeline.py`` (every first draft raises, every fix is the canonical solution)
costs almost nothing but what every run pays before and after its units. Each
measurement runs in a fresh process into a fresh output folder, as
``critiquebench run`` (``flow``: its temporary Prefect server; ``standing``: a
server ``critiquebench server`` keeps) or as the library loop (``library``:
``start_run``, the units on a thread pool, ``finish_run``).

The child process stamps the moments the run passes (its functions are wrapped, its
code unchanged): the interpreter up, the CLI imported, the preflight, the Prefect
server spawned and answering, the flow imported and entered, the model and judge
built, the sandbox probe, the ``runs`` row, the first unit begun and the last
written, the quality check, ``finish_run``, the report, the printing, the server's
stop, the last exit handler; the parent adds the process's spawn and exit and its
CPU seconds (user + system of the process and every child it waited for).

``--roots OLD NEW`` measures two source trees interleaved (OLD, NEW, OLD, NEW...) and
prints each phase's median for both: an A/B of a change to the fixed cost.

Run: .venv/bin/python bench/fixed_cost.py [--paths flow,library,standing] [--rounds 3]
     .venv/bin/python bench/fixed_cost.py --roots OLD_CHECKOUT NEW_CHECKOUT
"""

from __future__ import annotations

import argparse
import atexit
import functools
import importlib.abc
import importlib.machinery
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_DRAFT = '\n\n\ndef {name}(*args, **kwargs):\n    raise ValueError("first draft")\n'

_STAMPS: list[tuple[str, float, float]] = []
_CPU = " / cpu"
"""Suffix of a stamp's CPU seconds (of the run's own process) in a measurement."""


def _stamp(label: str) -> None:
    _STAMPS.append((label, time.time(), time.process_time()))


def _wrapped(function: Callable[..., Any], label: str) -> Callable[..., Any]:
    """``function`` stamping ``label begins`` and ``label ends`` at every call."""

    @functools.wraps(function)
    def stamped(*args: Any, **kwargs: Any) -> Any:
        _stamp(f"{label} begins")
        try:
            return function(*args, **kwargs)
        finally:
            _stamp(f"{label} ends")

    return stamped


# What to wrap once a module is imported: (attribute path, label). A label's first
# "begins" and last "ends" are kept (e.g. units: the first unit begun, the last written).
_PATCHES: dict[str, list[tuple[str, str]]] = {
    "critiquebench.runtime.prefect_server": [
        ("spawn_tied", "server spawn"),
        ("_become_ready", "server ready-wait"),
        ("LocalServer.wait_ready", "flow waits for server"),
        ("LocalServer.stop", "server stop"),
    ],
    "critiquebench.pipeline._preflight": [("preflight", "preflight")],
    "critiquebench.pipeline._run": [
        ("start_run", "start_run"),
        ("dependencies_for", "model + judge"),
        ("_probe", "sandbox probe"),
        ("finish_run", "finish_run"),
        ("execute_unit", "units"),
    ],
    "critiquebench.pipeline._store": [
        ("ResultStore.write_run_row", "runs row"),
        ("ResultStore.write_unit", "unit writes"),
    ],
    "critiquebench.judges.static._checker": [
        ("StaticChecker.warm", "mypy warm"),
        ("StaticChecker._start", "mypy daemon start"),
    ],
    "critiquebench.quality._isolated": [
        ("PendingCheck.send", "quality send"),
        ("PendingCheck.result", "quality result"),
    ],
    "critiquebench.pipeline._report_child": [
        ("PendingReport.prepare", "report prepare"),
        ("PendingReport.result", "report result"),
    ],
    "flows.ab_matrix": [("_run_and_check", "flow body")],
    "critiquebench.cli": [
        ("_print_report", "print report"),
        ("_finish_ci", "gate"),
    ],
}


class _Patcher(importlib.abc.MetaPathFinder):
    """Wraps the functions of ``_PATCHES`` as their modules are imported."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _PATCHES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _stamp(f"imported {fullname}")
            for dotted, label in _PATCHES[fullname]:
                *owners, name = dotted.split(".")
                owner: Any = module
                for part in owners:
                    owner = getattr(owner, part)
                if hasattr(owner, name):
                    setattr(owner, name, _wrapped(getattr(owner, name), label))

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def write_replay(path: Path, cases: int) -> None:
    """A wrong first draft (it raises) and the canonical solution as the first fix."""
    from critiquebench.suites import load_suite

    lines = []
    for case in load_suite("humaneval", limit=cases):
        fixed = case.reference_solution or ""
        draft = fixed + _DRAFT.format(name=case.entry_point)
        answers = [f"```python\n{draft}\n```", f"```python\n{fixed}\n```"]
        lines.append(json.dumps({"case_id": case.id, "answers": answers}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_stamps(path: Path) -> None:
    _stamp("last exit handler")
    path.write_text(json.dumps(_STAMPS), encoding="utf-8")


def _child(args: argparse.Namespace) -> None:
    """One run in this process, every stamp written to ``args.stamps`` at the very end."""
    _stamp("interpreter up")
    stamps = Path(args.stamps)
    # Registered first, so run last of the exit handlers (they run in reverse order).
    atexit.register(_write_stamps, stamps)
    sys.meta_path.insert(0, _Patcher())
    argv = ["run", "--suite", "humaneval", "--arms", "A,B", "--reps", str(args.reps)]
    argv += ["--model", f"replay:{args.replay}", "--max-concurrency", "2"]
    argv += ["--output", str(args.output), "--run-id", "bench", "--no-cache"]
    argv += ["--limit", str(args.cases)]
    if args.child == "library":
        _library(args)
        return
    from critiquebench import cli

    _stamp("CLI imported")
    sys.argv = ["critiquebench", *argv]
    try:
        cli.main()
    finally:
        _stamp("main returned")


def _library(args: argparse.Namespace) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run

    _stamp("library imported")
    config = RunConfig.model_validate({
        "suite": "humaneval", "arms": "A,B", "reps": args.reps, "limit": args.cases,
        "model": f"replay:{args.replay}", "max_concurrency": 2, "output": args.output,
        "run_id": "bench", "cache": False,
    })  # fmt: skip
    plan = start_run(config)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda work: run_unit(work[0], work[1], config), plan.work))
    finish_run(plan, failed=0)
    _stamp("main returned")


def measure(
    root: Path, path: str, scratch: Path, replay: Path, cases: int, reps: int
) -> dict[str, float]:
    """One run of ``path`` from source tree ``root``: seconds from spawn per stamp,
    plus ``exited`` and ``cpu s``."""
    output = scratch / f"out-{time.monotonic_ns()}"
    stamps = output.with_suffix(".json")
    child = "flow" if path == "standing" else path
    command = [sys.executable, str(Path(__file__).resolve()), "--child", child]
    command += ["--replay", str(replay), "--output", str(output), "--stamps", str(stamps)]
    command += ["--cases", str(cases), "--reps", str(reps)]
    pythonpath = os.pathsep.join([str(root / "src"), str(root)])
    env = {**os.environ, "PYTHONPATH": pythonpath, "PREFECT_HOME": str(scratch / "prefect")}
    if path != "standing":
        env.pop("PREFECT_API_URL", None)
    spawned = time.time()
    process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    exited = time.time()
    shutil.rmtree(output, ignore_errors=True)
    if status != 0:
        raise SystemExit(f"{path} run from {root} failed (status {status})")
    times: dict[str, float] = {}
    for label, at, cpu in json.loads(stamps.read_text(encoding="utf-8")):
        if label not in times or label.endswith(" ends"):  # first begin, last end
            times[label] = at - spawned
            times[f"{label}{_CPU}"] = cpu
    stamps.unlink()
    return {**times, "exited": exited - spawned, "cpu s": usage.ru_utime + usage.ru_stime}


def standing_server(root: Path, scratch: Path) -> subprocess.Popen[bytes]:
    """``critiquebench server`` for the bench's Prefect home, once it answers."""
    sys.path[:0] = [str(root / "src")]
    from critiquebench.runtime.prefect_server import standing_api

    home = scratch / "prefect"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PREFECT_HOME": str(home), "PYTHONPATH": str(root / "src")}
    env.pop("PREFECT_API_URL", None)
    cli = str(Path(sys.executable).with_name("critiquebench"))
    server = subprocess.Popen(
        [cli, "server", "--port", str(port)], cwd=scratch, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 600
    while standing_api(home) is None:
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the standing Prefect server did not start")
        time.sleep(0.5)
    return server


def print_timeline(label: str, runs: list[dict[str, float]], other: list[dict[str, float]]) -> None:
    """Medians (min-max) of every stamp: wall seconds from spawn and CPU seconds of the
    run's own process (and ``other``'s, beside them). ``cpu s``: the process tree's."""
    both = runs + other
    names = sorted(
        {n for r in both for n in r if not n.endswith(_CPU)}, key=lambda n: _median(both, n)
    )
    columns = ["wall s", "CPU s"] * (2 if other else 1)
    print(f"| {label} | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    for name in names:
        cells = [_cell(runs, name), _cell(runs, name + _CPU)]
        cells += [_cell(other, name), _cell(other, name + _CPU)] if other else []
        print(f"| {name} | " + " | ".join(cells) + " |")


def _median(runs: list[dict[str, float]], name: str) -> float:
    values = [r[name] for r in runs if name in r]
    return statistics.median(values) if values else float("inf")


def _cell(runs: list[dict[str, float]], name: str) -> str:
    values = [r[name] for r in runs if name in r]
    if not values:
        return "-"
    spread = f" ({min(values):.2f}-{max(values):.2f})" if len(values) > 1 else ""
    return f"{statistics.median(values):.2f}{spread}"


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="flow,library", help="flow, library, standing")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", type=int, default=1, help="the first N HumanEval cases")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--roots", nargs=2, type=Path, help="OLD and NEW source trees: A/B")
    parser.add_argument("--child", choices=("flow", "library"), help=argparse.SUPPRESS)
    parser.add_argument("--replay", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--stamps", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    roots = [r.resolve() for r in args.roots] if args.roots else [ROOT]
    scratch = Path(tempfile.mkdtemp(prefix="cb-bench-fixed-"))
    try:
        replay = scratch / "replay.jsonl"
        write_replay(replay, args.cases)
        # A first flow run migrates the new Prefect home's database: not measured.
        measure(roots[-1], "flow", scratch, replay, args.cases, args.reps)
        for path in args.paths.split(","):
            server = standing_server(roots[-1], scratch) if path == "standing" else None
            try:
                results: dict[Path, list[dict[str, float]]] = {root: [] for root in roots}
                print(f"\n{path}: load before {_load()}", flush=True)
                for _ in range(args.rounds):
                    for root in roots:
                        results[root].append(
                            measure(root, path, scratch, replay, args.cases, args.reps)
                        )
                print(f"{path}: load after {_load()}")
                label = f"{path}: {roots[0].name}" + (f" vs {roots[1].name}" if args.roots else "")
                print_timeline(label, results[roots[0]], results[roots[-1]] if args.roots else [])
            finally:
                if server is not None:
                    os.killpg(server.pid, signal.SIGINT)
                    server.wait()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
