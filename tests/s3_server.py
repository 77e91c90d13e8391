"""A real S3-compatible server (moto's server mode) on 127.0.0.1, for store tests.

It runs in a process of its own that is killed with the test process (even a killed
one: ``PR_SET_PDEATHSIG``), listens on a free port, and keeps everything in memory.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class S3Server:
    """Where the server listens, and the environment a client needs to reach it."""

    endpoint: str

    def environment(self) -> dict[str, str]:
        """Variables that point boto3/s3fs (in this or a child process) at the server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ENDPOINT_URL_S3": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def make_bucket(self, name: str) -> None:
        """Create bucket ``name``."""
        import boto3

        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=name)


@contextmanager
def s3_server() -> Iterator[S3Server]:
    """Start moto's S3 server on a free port and stop it on exit."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_parent,
        env={**os.environ, "MOTO_ALLOW_NONEXISTENT_REGION": "true"},
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                # Only once our own process listens: the port was free when chosen, but
                # another process (another test session's server) can take it before
                # moto binds it, and would then answer in its place.
                if _listens(process.pid, port):
                    with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=5):
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"moto server did not start on port {port}")
            time.sleep(0.2)
        _forget_s3_clients()
        yield S3Server(endpoint)
    finally:
        process.kill()
        process.wait(timeout=30)
        _forget_s3_clients()


def _listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` itself listens on TCP ``port``."""
    import psutil

    try:
        connections = psutil.Process(pid).net_connections("tcp")
    except psutil.NoSuchProcess:
        return False
    return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in connections)


def _forget_s3_clients() -> None:
    # fsspec keeps one S3FileSystem per set of arguments for the process's life, and
    # the endpoint comes from the environment, not the arguments: a later test's
    # s3:// path would reach the server an earlier test stopped (the cluster test
    # failed so after the object-store tests ran in the same process).
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()
