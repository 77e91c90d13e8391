"""The fences around one judged attempt: the same for every judge that runs in the sandbox."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class SandboxLimits:
    """Fences around one judged attempt (all of its processes together)."""

    wall_s: float = 10.0
    """Time budget floor of the whole attempt, in CPU-seconds of all its processes
    together (raised for cases whose reference is slow): used up, the attempt is a
    ``timeout`` defect however long it waited for a CPU."""
    wall_multiple: float = 6.0
    """The wall clocks (of the attempt, of each check) allow this many times their CPU
    budget. They are a safety net only: one running out is a suspected infrastructure
    failure, proved with a control (``judges/_proof.py``), never a verdict by itself."""
    check_timeout_s: float = 3.0
    """CPU-time floor of one check (and of defining the artifact); immune to host load."""
    timeout_multiple: float = 20.0
    """A check may take this many times the reference solution's time, if that is longer."""
    cpu_s: int = 20
    """CPU-seconds limit of each process of the attempt, a second fence behind the timers
    (raised to stay above the attempt's CPU budget)."""
    memory_bytes: int = 1 << 30
    """Memory cap: address space of each process, and resident memory of all together."""
    file_bytes: int = 8 << 20
    """Largest file the attempt may write."""
    tmp_bytes: int = 64 << 20
    """Size of the attempt's private /tmp and of its /dev/shm (each)."""
    processes: int = 32
    """Processes and threads the attempt may run at once."""
    results_bytes: int = 1 << 20
    """Largest results stream read from the attempt; more is a crash defect."""
    namespaces: bool = True
    """Give each attempt fresh user, PID and mount namespaces where the kernel allows."""
