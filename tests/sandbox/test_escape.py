"""Nothing a candidate starts outlives its attempt, and nothing it writes persists."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import uuid
from pathlib import Path

from critiquebench.judges import PythonJudge, SandboxLimits
from tests.helpers import GOOD_ADD, make_case
from tests.sandbox.conftest import kinds, run


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _daemon(marker: str, then: str = "time.sleep(30)") -> str:
    """Code that leaves a double-forked, session-leading daemon behind."""
    return (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', 'import time; {then}', "
        f"'{marker}'])\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\n"
    )


def test_a_daemon_does_not_outlive_its_attempt(judge: PythonJudge) -> None:
    marker = f"cb-daemon-{uuid.uuid4().hex}"
    result = run(judge, _daemon(marker) + GOOD_ADD)
    assert result.passed, result.failures
    assert _processes_with(marker) == []


def test_a_daemon_holding_the_results_pipe_does_not_stall_the_judge(judge: PythonJudge) -> None:
    # The daemon inherits every descriptor, the results pipe included, and sleeps;
    # a correct answer must still be scored correct, not as a wall-clock timeout.
    marker = f"cb-holder-{uuid.uuid4().hex}"
    holder = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
    )
    result = run(judge, holder + GOOD_ADD + f"\n# {marker}\n")
    assert result.passed, result.failures
    assert result.duration_s < SandboxLimits().wall_s


def test_files_in_tmp_and_shm_do_not_persist_to_the_next_attempt(judge: PythonJudge) -> None:
    name = f"cb-persist-{uuid.uuid4().hex}"
    writer = (
        "import os\n"
        f"for folder in ('/tmp', '/dev/shm', '/var/tmp'):\n"
        "    try:\n"
        f"        open(os.path.join(folder, '{name}'), 'w').write('x' * 1000)\n"
        "    except OSError:\n"
        "        pass\n" + GOOD_ADD
    )
    reader = (
        "import os\n"
        "def add(a, b):\n"
        "    seen = [f for f in ('/tmp', '/dev/shm', '/var/tmp')\n"
        f"            if os.path.exists(os.path.join(f, '{name}'))]\n"
        "    return seen or a + b\n"
    )
    assert run(judge, writer).passed
    assert run(judge, reader).passed
    for folder in ("/tmp", "/dev/shm", "/var/tmp"):  # nor on the host
        assert not (Path(folder) / name).exists()


def test_ipc_objects_do_not_persist_to_the_next_attempt(judge: PythonJudge) -> None:
    # System V shared memory outlives the process that made it; each attempt gets an
    # IPC namespace of its own, so the worker's next attempt never finds it.
    key = uuid.uuid4().int & 0x7FFFFFFF
    writer = (
        "import ctypes\n"
        f"made = ctypes.CDLL(None).shmget({key}, 4096, 0o1666)\n"  # IPC_CREAT | 0666
        "def add(a, b):\n"
        "    return a + b if made != -1 else 'shmget failed'\n"
    )
    reader = (
        "import ctypes\n"
        f"found = ctypes.CDLL(None).shmget({key}, 0, 0)\n"
        "def add(a, b):\n"
        "    return a + b if found == -1 else 'the last attempt left shared memory'\n"
    )
    assert run(judge, writer).passed  # the attempt may use IPC itself
    result = run(judge, reader)
    assert result.passed, result.failures


def test_temp_space_is_capped(judge: PythonJudge) -> None:
    filler = (
        "def add(a, b):\n"
        "    for i in range(1000):\n"
        "        with open(f'/tmp/fill-{i}', 'wb') as f:\n"
        "            f.write(b'x' * (4 << 20))\n"
        "    return a + b\n"
    )
    result = run(judge, filler)
    assert not result.passed
    assert "OSError" in result.failures[0].message or "No space" in result.failures[0].message


def test_memory_is_capped_for_the_attempt_as_a_whole() -> None:
    # Three children of ~150 MiB each stay under a 256 MiB per-process limit but not
    # under 256 MiB together.
    limits = SandboxLimits(memory_bytes=256 << 20, wall_s=8.0)
    hog = (
        "import os, time\n"
        "def add(a, b):\n"
        "    for _ in range(3):\n"
        "        if os.fork() == 0:\n"
        "            block = bytearray(150 << 20)\n"
        "            time.sleep(5)\n"
        "            os._exit(0)\n"
        "    time.sleep(4)\n"
        "    return a + b\n"
    )
    judge = PythonJudge(limits)
    try:
        result = judge(make_case(), hog)
    finally:
        judge.close()
    assert not result.passed
    assert any("MiB together" in failure.message for failure in result.failures), kinds(result)


def test_host_processes_and_files_are_invisible(judge: PythonJudge) -> None:
    marker = f"cb-visible-{uuid.uuid4().hex}"
    code = (
        "import os, sys\n"
        "def add(a, b):\n"
        "    seen = []\n"
        "    for pid in os.listdir('/proc'):\n"
        "        try:\n"
        "            seen.append(open(f'/proc/{pid}/cmdline', 'rb').read())\n"
        "        except OSError:\n"
        "            pass\n"
        f"    leaked = [c for c in seen if b'pytest' in c or b'{marker}' in c]\n"
        "    homes = []\n"
        f"    for top in ('/root', '/home', '{os.getcwd()}'):\n"
        "        for folder, _, files in os.walk(top):\n"
        "            homes += [os.path.join(folder, f) for f in files\n"
        "                      if not os.path.join(folder, f).startswith(sys.prefix)]\n"
        "    return leaked + homes or a + b\n"
    )
    result = run(judge, code)
    assert result.passed, result.failures


def test_no_network_connection_leaves_the_sandbox(judge: PythonJudge) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(3)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    listener = threading.Thread(target=accept)
    listener.start()
    code = (
        "import socket\n"
        "def add(a, b):\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=1).sendall(b'hi')\n"
        "    return a + b\n"
    )
    try:
        result = run(judge, code)
    finally:
        listener.join()
        server.close()
    assert accepted == []
    assert "Error" in result.failures[0].message


def test_signals_cannot_reach_the_worker(judge: PythonJudge) -> None:
    code = (
        "import os, signal\n"
        "for target in (0, -1, os.getppid()):\n"
        "    try:\n"
        "        os.kill(target, signal.SIGKILL) if target != 0 else os.killpg(0, signal.SIGKILL)\n"
        "    except OSError:\n"
        "        pass\n" + GOOD_ADD
    )
    result = run(judge, code)
    assert result.infrastructure_error is None
    assert result.passed, result.failures  # a correct answer, whatever it tried
    assert run(judge, GOOD_ADD).passed  # and the judge carries on


def test_a_process_left_by_one_attempt_is_not_seen_by_the_next(judge: PythonJudge) -> None:
    # The worker's holder serves every attempt; each attempt is still PID 1 of a PID
    # namespace of its own, and the holder starts the next one only once no process of
    # the last is left.
    marker = f"cb-left-{uuid.uuid4().hex}"
    reader = (
        "import os\n"
        "def add(a, b):\n"
        "    seen = []\n"
        "    for pid in os.listdir('/proc'):\n"
        "        try:\n"
        "            seen.append(open(f'/proc/{pid}/cmdline', 'rb').read())\n"
        "        except OSError:\n"
        "            pass\n"
        f"    left = [c for c in seen if b'{marker}' in c]\n"
        "    return a + b if not left and os.getpid() == 1 else (left, os.getpid())\n"
    )
    workers = list(judge.sandbox._idle)
    assert run(judge, _daemon(marker) + GOOD_ADD).passed
    result = run(judge, reader)
    assert result.passed, result.failures
    assert judge.sandbox._idle == workers  # the same worker judged both


def test_keys_do_not_persist_to_the_next_attempt(judge: PythonJudge) -> None:
    # The kernel's keyrings outlive processes; each attempt has a user namespace (and so
    # user keyrings) of its own, so the next attempt never finds a key.
    name = f"cb-key-{uuid.uuid4().hex}".encode()
    rings = "(-3, -4, -5)"  # the session, user and user-session keyrings
    writer = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        f"made = [libc.syscall(248, b'user', {name!r}, b'x', 1, ring) for ring in {rings}]\n"
        "def add(a, b):\n"
        "    return a + b if min(made) > 0 else made\n"
    )
    reader = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        f"found = [libc.syscall(250, 10, ring, b'user', {name!r}, 0) for ring in {rings}]\n"
        "def add(a, b):\n"
        "    return a + b if max(found) == -1 else found\n"
    )
    assert run(judge, writer).passed  # add_key, then keyctl(KEYCTL_SEARCH): x86-64 numbers
    result = run(judge, reader)
    assert result.passed, result.failures


def test_no_process_outside_the_attempt_takes_its_signals(judge: PythonJudge) -> None:
    # Every process the attempt sees in /proc (the sandbox's own, the worker and its
    # holder among them) is signalled through its /proc folder, which names it whatever
    # PID namespace it is in: none but the attempt's own may take one.
    code = (
        "import os, signal\n"
        "me, taken = os.readlink('/proc/self'), []\n"
        "for pid in os.listdir('/proc'):\n"
        "    if pid.isdigit() and pid != me:\n"
        "        try:\n"
        "            folder = os.open(f'/proc/{pid}', os.O_RDONLY | os.O_DIRECTORY)\n"
        "            signal.pidfd_send_signal(folder, signal.SIGKILL)\n"
        "            taken.append(pid)\n"
        "        except OSError:\n"
        "            pass\n"
        "def add(a, b):\n"
        "    return a + b if not taken else taken\n"
    )
    workers = list(judge.sandbox._idle)
    result = run(judge, code)
    assert result.infrastructure_error is None
    assert result.passed, result.failures
    assert run(judge, GOOD_ADD).passed
    assert judge.sandbox._idle == workers and all(worker.alive for worker in workers)
