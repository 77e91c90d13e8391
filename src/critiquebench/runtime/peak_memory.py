"""The peak resident memory of this process, its own and no one else's.

``getrusage(RUSAGE_SELF).ru_maxrss`` is the obvious measure, but on Linux it keeps
the high-water mark of the process image it replaced: a child spawned (fork or vfork,
then exec) from a 500 MiB parent reports 500 MiB however little it used itself.
The kernel's ``VmHWM`` (in ``/proc/self/status``) starts afresh at exec, so it is
read where it exists; elsewhere (macOS, no /proc) ``ru_maxrss`` is the best there is.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

_STATUS = Path("/proc/self/status")


def peak_rss_mib(status: Path = _STATUS) -> float:
    """Peak resident memory of this process since it started its program, in MiB.

    ``status``: the proc status file to read (``VmHWM``, in kB); when it is missing
    or has no such line, ``ru_maxrss`` (which may include a parent's peak, see the module doc).
    """
    try:
        text = status.read_text(encoding="ascii")
    except OSError:
        text = ""
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is in kB on Linux, in bytes on macOS.
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 1024
