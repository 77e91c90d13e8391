"""Starts bubblewrap inside a user namespace mapped by the judge (used when it runs as root).

Runs as ``python -I -S -B -c <this source> '<argv as JSON>'``, stdlib only. The child
enters a new user namespace in which uid 0 is the host's root (so bubblewrap can bind
the interpreter even when it lives under a home folder no one else may enter) and uid
65534 is the host's ``nobody``, to which the worker then switches for good. Without
this, bubblewrap run by root would map the sandbox to the host's root.

This process stays to wait for bubblewrap (which dies with it) and exits with its status.
This file must not import critiquebench.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

_CLONE_NEWUSER = 0x10000000
_PR_SET_PDEATHSIG = 1


def main() -> None:
    argv = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)  # die with the judge; bubblewrap dies with us
    ready_read, ready_write = os.pipe()
    go_read, go_write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(ready_read)
        os.close(go_write)
        if libc.unshare(_CLONE_NEWUSER) != 0:
            os._exit(97)
        os.write(ready_write, b"1")
        if os.read(go_read, 1) != b"1":
            os._exit(98)
        os.execv(argv[0], argv)
    os.close(ready_write)
    os.close(go_read)
    # Our copies of the worker's pipes: the judge must see EOF when the worker dies.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    if os.read(ready_read, 1) == b"1":
        with open(f"/proc/{child}/uid_map", "w") as handle:
            handle.write("0 0 1\n65534 65534 1\n")
        with open(f"/proc/{child}/setgroups", "w") as handle:
            handle.write("allow")
        with open(f"/proc/{child}/gid_map", "w") as handle:
            handle.write("0 0 1\n65534 65534 1\n")
        os.write(go_write, b"1")
    _, status = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    main()
