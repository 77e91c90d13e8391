"""Helpers of the ``critiquebench`` command line (``critiquebench.cli``) that need no
Typer: finding runs, machine-readable output, the CI gate, interrupting a run."""
