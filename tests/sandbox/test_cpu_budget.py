"""The attempt's CPU budget covers all its processes together, the ended ones included,
so an answer cannot hide its CPU in children that come and go."""

from __future__ import annotations

import pytest

from critiquebench.judges import PythonJudge, SandboxLimits
from tests.helpers import make_case

# Wall clocks far beyond the CPU budget: on any host, even a busy one, the children
# use the budget long before a wall clock runs out, so CPU time is what decides.
LIMITS = SandboxLimits(wall_s=0.6, check_timeout_s=0.25, wall_multiple=100.0)

_BURN_IN_CHILDREN = (
    "import os, signal, time\n"
    "def add(a, b):\n"
    "    if {ignore}:\n"
    "        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped unwaited\n"
    "    while True:\n"
    "        pid = os.fork()\n"
    "        if pid == 0:\n"
    "            started = time.process_time()\n"
    "            while time.process_time() - started < 0.1:\n"
    "                pass\n"
    "            os._exit(0)\n"
    "        if {ignore}:\n"
    "            time.sleep(0.15)\n"
    "        else:\n"
    "            os.waitpid(pid, 0)\n"
)


@pytest.mark.parametrize("ignore", [False, True], ids=["waited", "auto-reaped"])
def test_children_that_ended_count_against_the_attempts_cpu_budget(ignore: bool) -> None:
    # The answer's own process only waits (its CPU timer never fires); each child
    # burns 0.1 CPU-seconds and ends. Together they use the attempt's budget.
    judge = PythonJudge(LIMITS, static=None)
    try:
        result = judge(make_case(), _BURN_IN_CHILDREN.format(ignore=ignore))
    finally:
        judge.close()
    assert result.infrastructure_error is None
    assert [failure.kind for failure in result.failures][:1] == ["timeout"]
    assert "used its 0.6 CPU-seconds (all its processes together)" in result.failures[0].message
