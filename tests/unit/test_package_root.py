"""The package root shows the architecture's rooms; process and runtime plumbing lives
in ``critiquebench.runtime`` (issue 25)."""

from __future__ import annotations

from pathlib import Path

import critiquebench

ROOMS = {
    "loop", "judges", "critics", "models", "suites", "pipeline", "quality", "analysis",
    "cli.py", "_cli", "runtime", "testing", "data", "__init__.py", "py.typed",
}  # fmt: skip


def test_the_package_root_holds_only_rooms() -> None:
    root = Path(critiquebench.__file__).parent
    entries = {path.name for path in root.iterdir() if path.name != "__pycache__"}
    assert entries <= ROOMS, sorted(entries - ROOMS)


def test_the_runtime_room_offers_its_modules_by_public_names() -> None:
    runtime = Path(critiquebench.__file__).parent / "runtime"
    modules = {path.stem for path in runtime.glob("*.py")} - {"__init__"}
    assert modules and not {name for name in modules if name.startswith("_")}
    described = (runtime / "__init__.py").read_text(encoding="utf-8")
    assert all(f"``{name}``" in described for name in modules)
