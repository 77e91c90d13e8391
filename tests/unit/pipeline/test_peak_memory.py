"""Peak memory of a process is its own, not the high-water mark of its parent."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from critiquebench.runtime.peak_memory import peak_rss_mib
from critiquebench.runtime.warm_child import WarmChild

_HELD_MIB = 300


def inherited_maxrss_mib() -> float:
    """What ``ru_maxrss`` says in the (child) process: the old, inherited measure."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_child_of_a_large_parent_reports_its_own_small_peak() -> None:
    held = b"\x01" * (_HELD_MIB * 2**20)  # resident: every page written
    assert peak_rss_mib() > _HELD_MIB
    child: WarmChild[float] = WarmChild([])
    child.call(inherited_maxrss_mib)
    done = child.result(timeout_s=120)
    del held
    # ru_maxrss in the child still carries this process's high-water mark ...
    assert done.value > _HELD_MIB
    # ... while the child's own peak is an interpreter and a few modules.
    assert 5 < done.peak_rss_mib < 150


def test_the_peak_is_read_from_vmhwm(tmp_path: Path) -> None:
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nVmPeak:\t 900000 kB\nVmHWM:\t   51200 kB\n", encoding="ascii")
    assert peak_rss_mib(status) == 50.0


def test_without_proc_the_peak_falls_back_to_ru_maxrss(tmp_path: Path) -> None:
    fallback = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert peak_rss_mib(tmp_path / "missing") == pytest.approx(fallback, rel=0.05)
    (tmp_path / "no-hwm").write_text("Name:\tpython\n", encoding="ascii")
    assert peak_rss_mib(tmp_path / "no-hwm") == pytest.approx(fallback, rel=0.05)
