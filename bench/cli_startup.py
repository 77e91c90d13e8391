"""How fast the CLI answers when it refuses a run (exit 2 before Prefect starts).

Usage: .venv/bin/python bench/cli_startup.py [REPEATS]

Each case runs the installed ``critiquebench`` in a fresh process from a temporary
folder, as a user would; the median and the fastest of REPEATS runs are printed
(the fastest is the least disturbed by other load on the machine).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = str(Path(sys.executable).with_name("critiquebench"))
CASES = {
    "--help": ["--help"],
    "run --help": ["run", "--help"],
    "bad --model": ["run", "--model", "nosuch"],
    "gemini without key": ["run", "--model", "gemini"],
    "missing replay file": ["run", "--model", "replay:missing.jsonl"],
    "--target 5": ["run", "--target", "5"],
    "--arms B": ["run", "--arms", "B"],
    "--rpm 0": ["run", "--rpm", "0"],
}
KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "CRITIQUEBENCH_GEMINI_SECRET_BLOCK")


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    with tempfile.TemporaryDirectory() as folder:
        env["PREFECT_HOME"] = str(Path(folder) / "prefect")
        print(f"{'case':<22} {'exit':>4} {'median s':>9} {'min s':>7}")
        for name, args in CASES.items():
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                done = subprocess.run(
                    [CLI, *args, *([] if "--help" in args else ["--output", "out"])],
                    cwd=folder, env=env, capture_output=True, text=True, check=False,
                )  # fmt: skip
                times.append(time.perf_counter() - started)
            median = statistics.median(times)
            print(f"{name:<22} {done.returncode:>4} {median:>9.2f} {min(times):>7.2f}")


if __name__ == "__main__":
    main()
