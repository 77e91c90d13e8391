"""The supervisor's watch over one attempt: how often it walks /proc, and when it pauses.

Run in a child interpreter: the watch kills every descendant of its own process, so it
must never run inside the test process (which has sandbox workers of its own).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from critiquebench.judges.sandbox import _worker

_HARNESS = """
import json, os, sys, time
sys.path.insert(0, {folder!r})
import _worker as W

looks, pauses = [], []
walk = W._walk
W._walk = lambda root: looks.append(time.monotonic()) or walk(root)
W.time.sleep = lambda seconds: pauses.append(seconds)
request = {{"wall_s": 5.0, "results_bytes": 1 << 20,
           "limits": {{"attempt_memory_bytes": 1 << 30}}}}

def spin(seconds):  # time.sleep is the watch's, counted: the child busy-waits
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass

def attempt(lines, quiet_s):
    read_end, write_end = os.pipe()
    started = time.monotonic()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        for _ in range(lines):  # one write per line, as the attempt's events
            os.write(write_end, b"x" * 100 + b"\\n")
            spin(0.0002)
        spin(quiet_s)
        os._exit(0)
    os.close(write_end)
    looks.clear(); pauses.clear()
    output = bytearray()
    outcome = W._watch(request, child, read_end, output, started)
    gaps = [b - a for a, b in zip([started] + looks, looks)]
    return {{"looks": len(looks), "pauses": len(pauses), "bytes": len(output),
            "seconds": time.monotonic() - started,
            "max_gap": max(gaps, default=0.0), "memory": outcome["memory_exceeded"]}}

print(json.dumps({{"chatty": attempt(200, 0.0), "quiet": attempt(0, 0.2)}}))
"""


def _watched() -> dict[str, dict[str, float]]:
    folder = str(Path(_worker.__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", _HARNESS.format(folder=folder)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, dict[str, float]] = json.loads(done.stdout)
    return result


def test_output_does_not_make_the_supervisor_walk_proc_at_every_line() -> None:
    watched = _watched()
    chatty, quiet = watched["chatty"], watched["quiet"]
    assert chatty["bytes"] == 200 * 101  # every line read
    # 200 lines over some 40 ms: a look at most every 5 ms (and the kill loop's one
    # walk), not one per wake-up; the kill loop finds the ended attempt already reaped
    # and does not pause.
    assert chatty["looks"] <= chatty["seconds"] / _worker._LOOK_GAP_S + 2
    assert chatty["pauses"] == 0 and quiet["pauses"] == 0
    # A silent attempt is still looked at, every 20 ms (less often only when the host
    # is too loaded to wake the watch on time): the memory guarantee stands.
    assert quiet["looks"] >= 3 and quiet["max_gap"] < 0.15
    assert not chatty["memory"] and not quiet["memory"]


def test_the_c_library_and_capability_structures_are_made_once_per_worker() -> None:
    # Made before the first fork, so neither of an attempt's two processes pays for them.
    assert _worker._libc() is _worker._libc()
    assert _worker._CapHeader(0x20080522, 0).version == 0x20080522
    assert [field[0] for field in _worker._CapData._fields_] == [
        "effective",
        "permitted",
        "inheritable",
    ]


def test_the_cpu_tally_counts_ended_processes_once_and_never_forgets_them() -> None:
    tally = _worker._CpuTally()
    tick = tally.tick
    # (start, own CPU, CPU of reaped children) per pid, in clock ticks.
    assert tally.look({10: (1.0, 100.0, 0.0), 11: (2.0, 50.0, 0.0)}) == 150 / tick
    # 11 ended and 10 waited for it: its CPU moved into 10's reaped children, once.
    assert tally.look({10: (1.0, 100.0, 50.0)}) == 150 / tick
    # 12 ran, was seen, and ended unwaited (auto-reaped): it is not forgotten.
    assert tally.look({10: (1.0, 110.0, 50.0), 12: (3.0, 70.0, 0.0)}) == 230 / tick
    assert tally.look({10: (1.0, 120.0, 50.0)}) == 240 / tick
    # A reused pid is another process (another start time): counted apart.
    assert tally.look({10: (1.0, 120.0, 50.0), 12: (9.0, 5.0, 0.0)}) == 245 / tick
