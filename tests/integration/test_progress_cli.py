"""`critiquebench run` progress through the real CLI: plain lines in logs, a live bar on a TTY.

Each call runs a real (small) run on the simulated model, whose calls really sleep
1 s, so units take seconds and the ETA has time to move while one runs. The runs use
the session's Prefect API (the progress display does not depend on who started it).
"""

from __future__ import annotations

import fcntl
import itertools
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

_CLI = str(Path(sys.executable).with_name("critiquebench"))
_ARGS = [
    "run", "--model", "sim:latency=1", "--limit", "2", "--arms", "A,B", "--no-cache",
    "--max-concurrency", "1", "--output", "out",
]  # fmt: skip
_LINE = re.compile(
    r"^progress: (\d)/4 units, (\d:\d\d:\d\d) elapsed, (ETA \d:\d\d:\d\d|ETA unknown)$"
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FRAME = re.compile(r"(\d)/4 (\d:\d\d:\d\d) elapsed, ETA (\d:\d\d:\d\d|unknown)")


def _eta_moved_while_a_unit_ran(seen: list[tuple[str, str]]) -> bool:
    """Two readings with the same count of finished units but different ETAs."""
    known = [(done, eta) for done, eta in seen if eta != "unknown" and done != "0"]
    return any(a[0] == b[0] and a[1] != b[1] for a, b in itertools.pairwise(known))


def _env(tmp_path: Path, api_url: str) -> dict[str, str]:
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_API_URL": api_url}
    env["CRITIQUEBENCH_PROGRESS_SECONDS"] = "1"
    env["TERM"] = "xterm-256color"
    return env


@pytest.mark.slow
def test_redirected_output_gets_a_plain_line_every_few_seconds(
    tmp_path: Path, prefect_api_url: str
) -> None:
    done = subprocess.run(
        [_CLI, *_ARGS], cwd=tmp_path, env=_env(tmp_path, prefect_api_url),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    progress = [line for line in done.stderr.splitlines() if line.startswith("progress:")]
    assert progress[-1].startswith("progress: 4/4 units done in 0:00:")
    matched = [_LINE.match(line) for line in progress[:-1]]
    assert all(matched), progress
    assert len(matched) >= 4  # 4 units of >= 1 s each, one line a second
    counts = [int(m.group(1)) for m in matched if m]
    assert counts == sorted(counts) and counts[-1] >= 3
    assert _eta_moved_while_a_unit_ran([(m.group(1), m.group(3)) for m in matched if m])
    assert "\x1b[" not in done.stderr  # no terminal control codes in a log
    assert "progress:" not in done.stdout  # the report on stdout stays clean


@pytest.mark.slow
def test_a_terminal_gets_a_live_bar_whose_elapsed_time_and_eta_move(
    tmp_path: Path, prefect_api_url: str
) -> None:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    process = subprocess.Popen(
        [_CLI, *_ARGS], cwd=tmp_path, env=_env(tmp_path, prefect_api_url), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=follower, text=True,
    )  # fmt: skip
    os.close(follower)
    stdout, _ = process.communicate(timeout=300)
    reader.join(timeout=10)
    os.close(leader)
    shown = b"".join(chunks).decode(errors="replace")
    assert process.returncode == 0, shown
    frames = _FRAME.findall(_ANSI.sub("", shown))
    assert frames, shown
    elapsed = [frame[1] for frame in frames]
    assert len(set(elapsed)) >= 4 and elapsed == sorted(elapsed)
    assert _eta_moved_while_a_unit_ran([(f[0], f[2]) for f in frames]), frames
    assert "\x1b[" in shown  # drawn in place, as a bar
    assert "progress: 4/4 units done in 0:00:" in shown
    assert "progress:" not in stdout
