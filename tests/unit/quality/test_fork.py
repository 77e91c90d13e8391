"""Work split between this process and a fork: same values, the fork's errors raised here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from critiquebench.quality._fork import both


def boom() -> int:
    raise ValueError("bad table")


def test_both_parts_run_and_the_first_in_another_process() -> None:
    there, here = both(os.getpid, os.getpid)
    assert here == os.getpid()
    assert there != here if sys.platform == "linux" else there == here


def test_large_values_come_back_whole() -> None:
    big = list(range(200_000))  # far more than a pipe holds at once
    there, here = both(lambda: big, lambda: "here")
    assert there == big and here == "here"


def test_an_exception_in_the_fork_is_raised_here() -> None:
    with pytest.raises(ValueError, match="bad table"):
        both(boom, os.getpid)


def test_an_exception_here_is_raised_and_the_fork_reaped(tmp_path: Path) -> None:
    mark = tmp_path / "pid"

    def there() -> int:
        mark.write_text(str(os.getpid()), encoding="ascii")
        return 0

    with pytest.raises(ValueError, match="bad table"):
        both(there, boom)
    if sys.platform == "linux":
        with pytest.raises(ChildProcessError):  # waited for already: no zombie left
            os.waitpid(int(mark.read_text(encoding="ascii")), os.WNOHANG)


@pytest.mark.skipif(sys.platform != "linux", reason="forks only on Linux")
def test_a_fork_says_when_its_value_is_ready_and_can_be_dropped(tmp_path: Path) -> None:
    import select
    import time

    from critiquebench.quality._fork import Forked

    quick = Forked(os.getpid)
    assert select.select([quick.fileno()], [], [], 30)[0] == [quick.fileno()]
    assert quick.result() not in (os.getpid(), None)

    mark = tmp_path / "finished"

    def slow() -> int:
        time.sleep(30)
        mark.write_text("yes", encoding="ascii")
        return 1

    started = time.monotonic()
    dropped = Forked(slow)
    assert select.select([dropped.fileno()], [], [], 0.2)[0] == []  # not ready
    dropped.kill()
    assert time.monotonic() - started < 10 and not mark.exists()
    dropped.kill()  # once is enough: a second call does nothing
