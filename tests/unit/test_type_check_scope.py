"""mypy skips some packages (pyproject's ``follow_imports = "skip"``): only ones the
type-checked code never imports, since a skipped package's names are ``Any`` without a
word from mypy."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _mypy_config() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        config: dict[str, object] = tomllib.load(file)["tool"]["mypy"]
    return config


def skipped_packages() -> set[str]:
    """The top-level packages whose imports mypy does not follow."""
    overrides = _mypy_config().get("overrides", [])
    assert isinstance(overrides, list)
    return {
        pattern.removesuffix(".*").split(".")[0]
        for override in overrides
        if override.get("follow_imports") == "skip"
        for pattern in override["module"]
    }


def imported_packages(files: list[Path]) -> dict[str, str]:
    """Each top-level package the files import (absolute imports), with one place."""
    found: dict[str, str] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_checked_code_imports_no_package_mypy_skips() -> None:
    checked = _mypy_config()["files"]
    assert isinstance(checked, list)
    files = [path for folder in checked for path in sorted((ROOT / folder).rglob("*.py"))]
    skipped = skipped_packages()
    assert {"sqlalchemy", "dask"} <= skipped  # the rule is read, not empty
    imported = imported_packages(files)
    assert "prefect" in imported and "great_expectations" in imported
    wrong = {name: imported[name] for name in skipped & imported.keys()}
    assert not wrong, f"imported, yet skipped by mypy (take them off the list): {wrong}"
