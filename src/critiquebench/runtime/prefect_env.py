"""Keep Prefect's state inside the project: call before ``import prefect``.

A bare ``import prefect`` creates ``~/.prefect``; pointing ``PREFECT_HOME`` at a
project folder first keeps the user's home untouched.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

PREFECT_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    # The default 20 s is tight for the ephemeral server on a 2-core machine.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_LEVEL": "WARNING",
}


def configure_prefect_environment(
    home: Path, environ: MutableMapping[str, str] | None = None
) -> Path:
    """Set ``PREFECT_HOME`` (unless the user set it) and quiet, local-only defaults.

    Returns the Prefect home in effect.
    """
    env = os.environ if environ is None else environ
    env.setdefault("PREFECT_HOME", str(home.resolve()))
    for name, value in PREFECT_DEFAULTS.items():
        env.setdefault(name, value)
    return Path(env["PREFECT_HOME"])
