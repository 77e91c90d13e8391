"""Without bubblewrap the candidate never runs as root: the worker leaves root for
nobody, and where nobody cannot run the interpreter the sandbox is refused unless the
user opts in by name."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.judges import FALLBACK_AS_ROOT, SANDBOX_VARIABLE, PythonJudge, fallback_refusal
from critiquebench.judges.sandbox._pool import Sandbox, SandboxRefused, _fallback
from tests.helpers import GOOD_ADD, hollow_then_fixed_replay, make_case

FIX = "apt-get install bubblewrap"


@pytest.fixture()
def private_interpreter_as_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process as root, its interpreter in a folder only its owner may enter (as
    under /root), and no bubblewrap on the PATH."""
    private = tmp_path / "private"
    python = private / "bin" / "python3"
    (private / "lib").mkdir(parents=True)
    python.parent.mkdir()
    python.write_text("")
    python.chmod(0o755)
    private.chmod(0o700)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(sys, "base_prefix", str(private))
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    monkeypatch.delenv(SANDBOX_VARIABLE, raising=False)
    return python


def test_without_bubblewrap_a_root_fallback_is_refused_naming_the_fix(
    private_interpreter_as_root: Path,
) -> None:
    refusal = fallback_refusal()
    assert refusal is not None and "\n" not in refusal
    assert FIX in refusal and f"{SANDBOX_VARIABLE}={FALLBACK_AS_ROOT}" in refusal
    assert "bwrap) is not installed" in refusal
    with pytest.raises(SandboxRefused, match=FIX):
        _fallback("bwrap refused to start: test")
    # A judge that gets this far anyway never starts a worker: an infrastructure error.
    with pytest.raises(SandboxRefused):
        Sandbox.detect()
    result = PythonJudge(static=None)(make_case(), GOOD_ADD)
    assert result.infrastructure_error is not None and FIX in result.infrastructure_error


def test_a_forced_fallback_is_refused_as_well(
    private_interpreter_as_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SANDBOX_VARIABLE, "fallback")
    refusal = fallback_refusal()
    assert refusal is not None and f"{SANDBOX_VARIABLE}=fallback," in refusal


def test_the_opt_in_by_name_runs_as_root_and_says_so(
    private_interpreter_as_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SANDBOX_VARIABLE, FALLBACK_AS_ROOT)
    assert fallback_refusal() is None
    mode = _fallback("fallback forced")
    assert not mode.drop_to_nobody
    assert "THE CANDIDATE RUNS AS ROOT" in mode.description
    assert f"{SANDBOX_VARIABLE}={FALLBACK_AS_ROOT}" in mode.description


def test_a_user_who_is_not_root_is_not_refused(
    private_interpreter_as_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert fallback_refusal() is None
    assert "ROOT" not in _fallback("no bwrap").description


def test_an_unknown_sandbox_choice_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SANDBOX_VARIABLE, "none")
    with pytest.raises(ValueError, match=FALLBACK_AS_ROOT):
        fallback_refusal()


def test_the_run_is_refused_before_any_work_with_exit_2(
    private_interpreter_as_root: Path, tmp_path: Path
) -> None:
    replay = hollow_then_fixed_replay(tmp_path, limit=1)
    output = tmp_path / "runs"
    result = CliRunner().invoke(
        app,
        ["run", "--suite", "basic", "--limit", "1", "--model", f"replay:{replay}",
         "--output", str(output), "--run-id", "refused"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert FIX in " ".join(result.output.split())
    assert not output.exists()


class _QuietLibc:
    """prctl/unshare that change nothing, so the worker's set-up can run in the test."""

    def prctl(self, *args: object) -> int:
        return 0

    def unshare(self, *args: object) -> int:
        return 0


def test_a_worker_that_cannot_leave_root_ends_instead_of_judging_as_root(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from critiquebench.judges.sandbox import _worker

    def refuse(_uid: int) -> None:
        raise PermissionError("operation not permitted")

    monkeypatch.setattr(_worker, "_libc", _QuietLibc)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(os, "setgroups", lambda _groups: None)
    monkeypatch.setattr(os, "setgid", lambda _gid: None)
    monkeypatch.setattr(os, "setuid", refuse)
    with pytest.raises(SystemExit) as ended:
        _worker._start({"drop_to_nobody": True})
    assert ended.value.code != 0
    assert "could not leave root" in capsys.readouterr().err
