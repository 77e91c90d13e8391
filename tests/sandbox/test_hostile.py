"""A corpus of hostile candidates: each must be contained, and the harness must carry on.

The strongest fences (no network, an unprivileged user that cannot write outside
its folder or signal the harness) need root or namespaces; where those are not
available the tests that rely on them are skipped with the reason.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.judges import JudgeResult, PythonJudge, SandboxLimits
from tests.helpers import GOOD_ADD, make_case

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="this fence needs root (user and net namespaces)")
LIMITS = SandboxLimits(wall_s=6.0, check_timeout_s=2.0)


def judge(code: str, limits: SandboxLimits = LIMITS) -> JudgeResult:
    return PythonJudge(limits)(make_case(), code)


def kinds(result: JudgeResult) -> list[str]:
    return [failure.kind for failure in result.failures]


def _nobody_processes() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == 65534:
                    found.append(int(entry.name))
            except FileNotFoundError:
                continue
    return found


def test_infinite_loop_at_import_is_stopped() -> None:
    result = judge("while True:\n    pass\n" + GOOD_ADD)
    assert kinds(result)[0] == "import" and "exceeded" in result.failures[0].message
    assert result.duration_s < LIMITS.wall_s


def test_sleep_that_blocks_the_timer_is_killed_at_the_wall_clock() -> None:
    code = "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
    result = judge(code + "time.sleep(600)\n" + GOOD_ADD, SandboxLimits(wall_s=1.5))
    assert kinds(result)[0] == "timeout"
    assert result.duration_s < 5


def test_memory_hog_gets_memory_error_and_the_harness_is_unaffected() -> None:
    code = "def add(a, b):\n    block = bytearray(8 << 30)\n    return a + b\n"
    result = judge(code)
    assert set(kinds(result)) == {"error"}
    assert "MemoryError" in result.failures[0].message


@needs_root
def test_fork_bomb_is_capped_and_every_process_is_gone_afterwards() -> None:
    code = (
        "import os\n"
        "for _ in range(10_000):\n"
        "    try:\n        os.fork()\n    except OSError:\n        break\n"
        "def add(a, b):\n    return a + b\n"
    )
    result = judge(code, SandboxLimits(wall_s=4.0, processes=32))
    assert result.duration_s < 10
    deadline = time.monotonic() + 5
    while _nobody_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _nobody_processes() == []


def test_thread_storm_is_contained() -> None:
    code = (
        "import threading, time\n"
        "def spin():\n    time.sleep(30)\n"
        "def add(a, b):\n"
        "    for _ in range(100_000):\n"
        "        threading.Thread(target=spin, daemon=True).start()\n"
        "    return a + b\n"
    )
    result = judge(code, SandboxLimits(wall_s=4.0, processes=32))
    assert result.defects() >= 1
    assert result.duration_s < 10


def _judge_dirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("cb-judge-*")}


def test_disk_filler_is_stopped_by_the_file_size_limit_and_its_folder_removed() -> None:
    before = _judge_dirs()
    code = (
        "def add(a, b):\n"
        "    with open('fill.bin', 'wb') as f:\n"
        "        for _ in range(1000):\n            f.write(b'x' * (1 << 20))\n"
        "    return a + b\n"
    )
    result = judge(code)
    assert result.defects() >= 1
    assert _judge_dirs() == before


@pytest.fixture
def victim_dir() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="cb-victim-"))
    try:
        (folder / "keep.txt").write_text("precious")
        (folder / "runs.parquet").write_bytes(b"PAR1")
        yield folder
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


@needs_root
def test_cannot_delete_or_write_outside_its_folder(victim_dir: Path) -> None:
    code = (
        "import os\n"
        "def add(a, b):\n"
        f"    os.remove({str(victim_dir / 'keep.txt')!r})\n"
        f"    open({str(victim_dir / 'runs.parquet')!r}, 'w').write('gone')\n"
        "    return a + b\n"
    )
    result = judge(code)
    assert "PermissionError" in result.failures[0].message
    assert (victim_dir / "keep.txt").read_text() == "precious"
    assert (victim_dir / "runs.parquet").read_bytes() == b"PAR1"


@needs_root
def test_no_network_connection_leaves_the_child() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    accepted: list[object] = []

    def accept() -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                accepted.append(server.accept())
            except TimeoutError:
                continue

    listener = threading.Thread(target=accept)
    listener.start()
    port = server.getsockname()[1]
    code = (
        "import socket\n"
        "def add(a, b):\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=1).sendall(b'hi')\n"
        "    return a + b\n"
    )
    try:
        result = judge(code)
    finally:
        listener.join()
        server.close()
    assert accepted == []
    assert "OSError" in result.failures[0].message or "Error" in result.failures[0].message
    assert any("network=True" in note for note in result.notes)


def test_environment_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "sk-test-secret-4242")
    monkeypatch.setenv("PREFECT_API_KEY", "pnu-secret-4242")
    code = "import os\ndef add(a, b):\n    return repr(dict(os.environ))\n"
    result = judge(code)
    leaked = " ".join(str(f.actual) for f in result.failures)
    assert "PATH" in leaked  # the candidate really printed its environment...
    assert "4242" not in leaked and "PREFECT" not in leaked  # ...and it held no secret


def test_output_flood_on_stdout_is_discarded() -> None:
    # Half a gigabyte of prints goes to /dev/null: neither memory nor disk fills up.
    code = "import sys\nfor _ in range(500):\n    sys.stdout.write('x' * (1 << 20))\n" + GOOD_ADD
    result = judge(code, SandboxLimits(wall_s=20.0, check_timeout_s=15.0))
    assert result.passed


def test_flood_on_the_results_channel_is_cut_off() -> None:
    code = (
        "import os\n"
        "for fd in map(int, os.listdir('/proc/self/fd')):\n"
        "    if fd > 2:\n"
        "        try:\n            os.write(fd, b'x' * (4 << 20))\n"
        "        except OSError:\n            pass\n" + GOOD_ADD
    )
    result = judge(code, SandboxLimits(results_bytes=1 << 20))
    assert result.defects() >= 1


@needs_root
def test_cannot_kill_the_harness() -> None:
    code = (
        "import os, signal\n"
        "def add(a, b):\n"
        "    os.kill(os.getppid(), signal.SIGKILL)\n"
        "    return a + b\n"
    )
    result = judge(code)
    assert "PermissionError" in result.failures[0].message  # and this test process lives on


def test_fake_results_printed_or_forged_do_not_count() -> None:
    forged = '{"event": "check", "check": 0, "status": "pass"}'
    code = (
        "import os\n"
        f"print({forged!r})\n"
        "for fd in map(int, os.listdir('/proc/self/fd')):\n"
        "    if fd > 2:\n"
        "        try:\n"
        f"            os.write(fd, ({forged!r} + chr(10)).encode())\n"
        "        except OSError:\n            pass\n"
        "def add(a, b):\n    return a - b\n"
    )
    result = judge(code)
    assert result.checks_passed == 1  # only add(0, 0) == 0 truly passes


def test_exiting_early_with_success_is_a_crash_not_a_pass() -> None:
    result = judge("import os\nos._exit(0)\n" + GOOD_ADD)
    assert kinds(result) == ["crash", "not_run", "not_run", "not_run"]


def test_shell_metacharacters_in_model_text_reach_no_shell(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for text in (f"$(touch {marker})", f"`touch {marker}`", f"; touch {marker} #", "' && x"):
        judge(text)
        judge(f"def add(a, b):\n    return {text!r}\n")
    assert not marker.exists()


def test_library_never_uses_a_shell() -> None:
    source = Path(__file__).resolve().parents[2] / "src" / "critiquebench"
    offenders = [
        str(path)
        for path in source.rglob("*.py")
        if "shell=True" in path.read_text() or "os.system(" in path.read_text()
    ]
    assert offenders == []
