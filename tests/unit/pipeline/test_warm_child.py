"""One call in a child process that imported its modules ahead of time."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from critiquebench.runtime.warm_child import WarmChild, imported, wait_for_parent


def loaded(names: list[str]) -> list[str]:
    """The names of ``names`` that the (child) process has imported."""
    return [name for name in names if name in sys.modules]


def fails(message: str) -> None:
    raise ValueError(message)


def import_colorsys() -> None:
    import colorsys  # noqa: F401


def priority() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


def waits(path: Path) -> bool:
    path.write_text("waiting", encoding="ascii")
    return wait_for_parent()


def test_the_child_imports_ahead_and_returns_the_value_and_its_cost() -> None:
    child: WarmChild[list[str]] = WarmChild(["colorsys"])
    child.call(loaded, ["colorsys", "great_expectations"])
    done = child.result(timeout_s=120)
    assert done.value == ["colorsys"]  # imported ahead, and nothing else of the parent's
    assert done.peak_rss_mib > 1 and done.seconds > 0


def test_the_warm_up_runs_before_the_call() -> None:
    child: WarmChild[list[str]] = WarmChild([], warm_up=import_colorsys)
    child.call(loaded, ["colorsys", "great_expectations"])
    assert child.result(timeout_s=120).value == ["colorsys"]  # only the warm-up imported it


def test_a_failing_warm_up_leaves_the_call_to_run() -> None:
    child: WarmChild[list[str]] = WarmChild([], warm_up=functools.partial(fails, "warm"))
    child.call(loaded, ["colorsys"])
    assert child.result(timeout_s=120).value == []


def test_the_child_waits_niced_and_runs_the_call_at_the_parents_priority() -> None:
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    child: WarmChild[int] = WarmChild(["colorsys"], nice=7)
    assert os.getpriority(os.PRIO_PROCESS, child._process.pid) == min(ours + 7, 19)
    child.call(priority)
    called = child.result(timeout_s=120).value
    # Raising a priority back needs privileges; without them the call stays niced.
    assert called == ours if os.geteuid() == 0 else called in (ours, min(ours + 7, 19))


def test_a_call_waits_for_the_parent_to_let_it_go_on(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    child: WarmChild[bool] = WarmChild([])
    child.call(waits, mark)
    deadline = time.monotonic() + 120
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    assert child._process.poll() is None  # still waiting: it was not let go on
    child.go_on()
    assert child.result(timeout_s=120).value is True


def test_a_waiting_call_learns_the_parent_gave_up(tmp_path: Path) -> None:
    child: WarmChild[bool] = WarmChild([])
    child.call(waits, tmp_path / "mark")
    assert child.result(timeout_s=120).value is False  # its input closed, no go-ahead


def test_close_stops_a_child_never_called() -> None:
    child: WarmChild[None] = WarmChild(["colorsys"])
    folder = child._path
    child.close()
    assert child._process.returncode is not None and not folder.exists()
    child.close()  # twice is harmless


def test_an_exception_in_the_call_is_raised_in_the_parent() -> None:
    child: WarmChild[None] = WarmChild([])
    child.call(fails, "bad table")
    with pytest.raises(ValueError, match="bad table"):
        child.result(timeout_s=120)


def test_a_child_that_cannot_start_is_an_error_that_quotes_it() -> None:
    child: WarmChild[None] = WarmChild(["no_such_module_anywhere"])
    child.call(fails, "never runs")
    with pytest.raises(RuntimeError, match=r"(?s)no result:.*No module named 'no_such_module"):
        child.result(timeout_s=120)


def test_a_child_given_no_call_stops() -> None:
    child: WarmChild[None] = WarmChild([])
    with pytest.raises(RuntimeError, match="exited with code 0 and no result"):
        child.result(timeout_s=120)


def test_in_process_the_call_runs_here_when_its_result_is_asked_for(tmp_path: Path) -> None:
    child: WarmChild[bool] = WarmChild(["colorsys"], warm_up=import_colorsys, in_process=True)
    assert not hasattr(child, "_process")  # no process started, no folder made
    child.call(waits, tmp_path / "mark")
    assert not (tmp_path / "mark").exists()  # not yet: result() runs it
    child.go_on()
    done = child.result(timeout_s=1)
    assert done.value is True and done.in_process  # wait_for_parent: the parent asked
    assert (tmp_path / "mark").exists() and done.peak_rss_mib > 1
    with pytest.raises(RuntimeError, match="no call"):
        child.result()
    child.close()


def test_in_process_an_exception_in_the_call_is_raised_and_close_drops_the_call() -> None:
    child: WarmChild[None] = WarmChild([], in_process=True)
    child.call(fails, "bad table")
    with pytest.raises(ValueError, match="bad table"):
        child.result()
    child.call(fails, "never runs")
    child.close()
    with pytest.raises(RuntimeError, match="no call"):
        child.result()


def test_imported_names_the_modules_this_process_has() -> None:
    assert imported(["sys", "os"]) and imported([])
    assert not imported(["sys", "no_such_module_anywhere"])


def test_the_report_in_two_steps_reports_the_runs_row_written_in_between(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from critiquebench.analysis import write_reports
    from critiquebench.pipeline import ResultStore
    from critiquebench.pipeline import _report_child as report_child
    from tests.unit.analysis.synthetic_run import FakeUnit, write_run

    units = [FakeUnit(f"c{i}", arm, 0, (1,)) for i in range(3) for arm in "AB"]
    for folder in ("child", "here"):
        write_run(tmp_path / folder, "r", units)

    def finish(folder: Path) -> None:  # what finish_run does meanwhile: a new runs row
        store = ResultStore(folder)
        store.write_run_row("r", "start-1", {**store.run_rows("r")[0], "status": "failed"})

    def go_ahead() -> bool:
        finish(tmp_path / "child")
        return True

    monkeypatch.setattr(report_child, "wait_for_parent", go_ahead)
    built = report_child.report_when_asked(tmp_path / "child", "r", tmp_path / "none", 0.8)
    finish(tmp_path / "here")
    assert built.meta.status == "failed"
    assert built == write_reports(tmp_path / "here", "r", target=0.8).report


def test_the_report_is_built_before_the_runs_end_is_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the parent lets it go on, the child only takes the run's state from the new
    runs row and writes files: the numbers were computed while the check ran."""
    from critiquebench.pipeline import ResultStore
    from critiquebench.pipeline import _report_child as report_child
    from tests.unit.analysis.synthetic_run import FakeUnit, write_run

    write_run(tmp_path, "r", [FakeUnit(f"c{i}", arm, 0, (1,)) for i in range(3) for arm in "AB"])
    events: list[str] = []
    from critiquebench import analysis

    build = analysis.build_report

    def recorded_build(*args: Any, **kwargs: Any) -> Any:
        events.append("build")
        return build(*args, **kwargs)

    def go_ahead() -> bool:
        events.append("wait")
        store = ResultStore(tmp_path)
        store.write_run_row("r", "start-1", {**store.run_rows("r")[0], "status": "incomplete"})
        return True

    # The child imports the analysis's names when the call runs (not with the module).
    monkeypatch.setattr(analysis, "build_report", recorded_build)
    monkeypatch.setattr(report_child, "wait_for_parent", go_ahead)
    built = report_child.report_when_asked(tmp_path, "r", tmp_path / "none", 0.8)
    assert events == ["build", "wait"]
    assert built.meta is not None and built.meta.status == "incomplete"
    written = (tmp_path / "r" / "report.json").read_text(encoding="utf-8")
    assert '"status": "incomplete"' in written


@pytest.mark.parametrize("in_process", [False, True])
def test_a_pending_report_is_the_one_built_here(tmp_path: Path, in_process: bool) -> None:
    from critiquebench.analysis import read_report, write_reports
    from critiquebench.pipeline._report_child import PendingReport
    from tests.unit.analysis.synthetic_run import FakeUnit, write_run

    units = [
        FakeUnit(f"c{i}", arm, 0, (2, 0) if arm == "B" else (1,)) for i in range(4) for arm in "AB"
    ]
    write_run(tmp_path / "child", "r", units)
    write_run(tmp_path / "here", "r", units)
    pending = PendingReport(nice=5, in_process=in_process)
    with pytest.raises(RuntimeError, match="before prepare"):
        pending.result()
    pending.prepare(tmp_path / "child", "r", tmp_path / "no-prices.json", 0.8)
    done = pending.result(timeout_s=300)
    pending.close()
    assert done.in_process == in_process
    assert done.value == write_reports(tmp_path / "here", "r", target=0.8).report
    assert read_report(tmp_path / "child", "r") == done.value  # the files were written there
    html = (tmp_path / "child" / "r" / "report.html").read_text(encoding="utf-8")
    assert html == (tmp_path / "here" / "r" / "report.html").read_text(encoding="utf-8")


def test_a_process_that_loaded_the_report_builds_it_in_itself() -> None:
    from critiquebench.pipeline._report_child import PendingReport, warm_up

    script = "import flows.ab_matrix\n" + _NOT_HERE  # the flow's process: a child
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120, env=env)
    warm_up()  # what the child would load: loaded here now
    pending = PendingReport()
    assert pending._child.in_process
    pending.close()


_NOT_HERE = """
from critiquebench.pipeline._report_child import PendingReport
pending = PendingReport()
assert not pending._child.in_process
pending.close()
"""


@pytest.mark.parametrize(
    ("module", "state"), [("slow_module", "importing"), ("json", "waiting for its call")]
)
def test_a_child_dies_with_its_killed_parent_and_removes_its_folder(
    tmp_path: Path, module: str, state: str
) -> None:
    # The slow module takes a minute to import, so the end of the child's input (which
    # it reads only after the imports) cannot be what ends it. A killed parent cannot
    # remove the child's private folder: the child must (it leaked in the temp folder).
    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(60)\n", encoding="ascii")
    started = tmp_path / "child.txt"
    parent_code = (
        "import sys, time\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from critiquebench.runtime.warm_child import WarmChild\n"
        f"child = WarmChild([{module!r}])\n"
        "time.sleep(1)\n"  # the child is under way
        f"open({str(started)!r}, 'w').write(f'{{child._process.pid}} {{child._path}}')\n"
        "time.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code])
    try:
        deadline = time.monotonic() + 120
        while not started.exists() or not started.read_text():
            assert time.monotonic() < deadline, "the parent never started its child"
            time.sleep(0.1)
        pid, folder = started.read_text().split(" ", 1)
        child = int(pid)
        assert Path(folder).is_dir()
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 30
    while _alive(child):
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            pytest.fail(f"the warm child ({state}) outlived its killed parent")
        time.sleep(0.1)
    assert not Path(folder).exists(), f"the child ({state}) left its folder"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().split(b") ")[-1][:1] != b"Z"
    except OSError:
        return False


def test_a_ctrl_c_to_the_parents_group_leaves_the_child_to_its_parent() -> None:
    # A terminal's Ctrl-C signals the whole foreground group. The run's process handles
    # it (it stops scheduling units, then checks and reports what landed); its children
    # must still be there to do that (one that got it died mid-import: exit 1, not 130).
    parent_code = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, lambda signum, frame: None)\n"  # as the CLI's run
        "from critiquebench.runtime.warm_child import WarmChild\n"
        "child = WarmChild(['json'])\n"
        "print(child._process.pid, flush=True)\n"
        "sys.stdin.readline()\n"  # the test signals the group meanwhile
        "child.call(os.getpid)\n"
        "print(child.result(timeout_s=60).value, flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        assert parent.stdout is not None and parent.stdin is not None
        child = parent.stdout.readline().strip()
        assert child, parent.communicate(timeout=60)[1]
        os.killpg(parent.pid, signal.SIGINT)
        time.sleep(0.5)  # a child in the group would be dying now
        out, err = parent.communicate("\n", timeout=120)
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
            parent.wait()
    assert parent.returncode == 0, err[-2000:]
    assert out.strip() == child  # the call ran in the child the parent started
