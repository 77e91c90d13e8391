"""What importing the flow loads ahead of the first flow run."""

from __future__ import annotations

import subprocess
import sys


def test_the_flow_module_loads_what_creating_a_flow_run_would_import_later() -> None:
    # Loaded while the temporary Prefect API starts, not after it answered.
    script = "import sys, flows.ab_matrix; print('fastapi.encoders' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "True", done.stderr
