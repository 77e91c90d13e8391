"""The embedded model's speed by llama.cpp thread count, alone and beside busy cores.

A run at concurrency N keeps the machine busy beside the model: while one unit
generates, the others run their judges, and the run's own process works too. llama.cpp's
threads wait for each other by spinning, so a thread that loses its core to other work
stalls all of them. This measures one fixed prompt (greedy, 128 tokens out) with
1..cores threads, first on an idle machine, then with ``--busy`` processes spinning
(default: one, as a judge beside the model would).

Each setting loads the model in a fresh process and times ``--calls`` completions;
it prints the median wall seconds, CPU seconds and tokens per second.

Run: .venv/bin/python bench/local_model.py
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

_PROMPT = (
    "Write a Python function that returns the sum of the squares of a list of "
    "integers. Answer with code only."
)


def _spin() -> None:
    while True:
        pass


def _child(threads: int, calls: int) -> None:
    """Load the model with ``threads`` threads and print one JSON line per call."""
    from llama_cpp import Llama

    from critiquebench.models._local import default_model_path

    model = Llama(
        model_path=str(default_model_path()), n_ctx=2048,
        n_threads=threads, n_threads_batch=threads, verbose=False,
    )  # fmt: skip
    messages = [{"role": "user", "content": _PROMPT}]
    for _ in range(calls):
        wall, cpu = time.perf_counter(), time.process_time()
        reply = model.create_chat_completion(
            messages=messages, temperature=0.0, max_tokens=128, seed=1
        )
        tokens = reply["usage"]["completion_tokens"]
        record = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
        print(json.dumps({**record, "tokens": tokens}), flush=True)


def measure(threads: int, calls: int, busy: int) -> list[dict[str, float]]:
    """Time ``calls`` completions in a fresh process while ``busy`` processes spin."""
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(busy)]
    for spinner in spinners:
        spinner.start()
    try:
        command = [sys.executable, __file__, "--child", str(threads), "--calls", str(calls)]
        root = Path(__file__).resolve().parent.parent
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
        output = subprocess.run(command, env=env, capture_output=True, check=True, text=True)
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()
    return [json.loads(line) for line in output.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--busy", type=int, default=1, help="spinning processes beside it")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.calls)
        return
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} CPUs usable, load average {os.getloadavg()[0]:.2f}")
    print("| threads | busy cores beside | median wall s | worst wall s | CPU s | tokens/s |")
    print("|---|---|---|---|---|---|")
    for busy in (0, args.busy):
        for threads in range(1, cores + 1):
            calls = measure(threads, args.calls, busy)
            wall = statistics.median(call["wall"] for call in calls)
            cpu = statistics.median(call["cpu"] for call in calls)
            tokens = statistics.median(call["tokens"] for call in calls)
            worst = max(call["wall"] for call in calls)
            print(
                f"| {threads} | {busy} | {wall:.2f} | {worst:.2f} | {cpu:.2f} "
                f"| {tokens / wall:.1f} |"
            )


if __name__ == "__main__":
    main()
