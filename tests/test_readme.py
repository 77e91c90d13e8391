"""The README and the guides it links say what the code does: their examples run.

Python blocks are executed; every `critiquebench` command line in a shell block
must name a real command and real options; columns and environment variables the
docs name must exist; the Makefile targets do what the README says; the quorum
example of docs/verdict-blocks.md prints what the page shows.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.pipeline._schema import arrow_schema

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDES = [
    README,
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "deployments" / "README.md",
    ROOT / "notebooks" / "README.md",
    ROOT / "data" / "suites" / "README.md",
]
TABLES = ("runs", "cases", "attempts", "calls")


def _shell_lines(path: Path) -> list[str]:
    """Every command line of the page's ``sh`` blocks, continuation lines joined."""
    blocks = re.findall(r"```sh\n(.*?)```", path.read_text(), re.DOTALL)
    return [
        line.split("  #")[0].strip()
        for block in blocks
        for line in block.replace("\\\n", " ").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def test_python_examples_in_readme_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})


def test_the_two_make_commands_do_what_the_readme_says() -> None:
    text = README.read_text()
    assert "make run    # " in text and "make test   # " in text

    def dry_run(target: str) -> str:
        done = subprocess.run(
            ["make", "-n", target, "PYTHON=python3"], cwd=ROOT, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert re.search(r"^\.venv/bin/critiquebench run\b", dry_run("run"), re.M)
    test = dry_run("test")
    for step in (r"\.venv/bin/ruff check ", r"\.venv/bin/mypy\b", r"\.venv/bin/pytest\b"):
        assert re.search(step, test), (step, test)  # lint, types, the whole suite


def _options(command: Any) -> set[str]:
    return {
        name
        for param in command.params
        for name in (*param.opts, *param.secondary_opts)
        if name.startswith("--")
    }


@pytest.mark.parametrize("guide", GUIDES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_critiquebench_command_line_in_the_guides_parses(guide: Path) -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    lines = [line for line in _shell_lines(guide) if "critiquebench " in line]
    table_rows = re.findall(r"^\| `critiquebench ([a-z-]+)", guide.read_text(), re.M)
    for name in table_rows:
        assert name in group.commands, f"{guide.name}: no command {name!r}"
    for line in lines:
        words = shlex.split(line[line.index("critiquebench ") :])
        command = group.commands.get(words[1])
        assert command is not None, f"{guide.name}: {line!r}: no command {words[1]!r}"
        unknown = {w.split("=")[0] for w in words[2:] if w.startswith("--")} - _options(command)
        assert not unknown, f"{guide.name}: {line!r}: unknown options {sorted(unknown)}"


def test_columns_named_in_the_readme_exist() -> None:
    text = README.read_text()
    named = re.findall(r"`(runs|cases|attempts|calls)\.([a-z_]+)\b", text)
    assert named
    for table, column in named:
        assert column in arrow_schema(table).names, f"`{table}.{column}` is not a column"
    # The files table names each table's columns as the schema spells them.
    for table in TABLES:
        row = re.search(rf"^\| `{table}/\*\.parquet` \|.*$", text, re.M)
        assert row, table
        for column in re.findall(r"`([a-z]+_[a-z_]+)`", row.group(0).split("|")[3]):
            assert column in arrow_schema(table).names, f"{table}: `{column}` is not a column"
    cases_row = re.search(r"^\| `cases/\*\.parquet` \|.*$", text, re.M)
    assert cases_row and "`defects_initial`" in cases_row.group(0)
    assert "`defects_final`" in cases_row.group(0)


def test_every_environment_variable_the_code_reads_is_documented() -> None:
    code = "\n".join(path.read_text() for path in (ROOT / "src").rglob("*.py"))
    names = set(re.findall(r"\bCRITIQUEBENCH_[A-Z_]+[A-Z]\b", code))
    assert "CRITIQUEBENCH_GEMINI_SECRET_BLOCK" in names
    docs = "\n".join(path.read_text() for path in GUIDES)
    assert not sorted(name for name in names if not re.search(rf"`{name}\b", docs))


def test_the_guides_link_to_files_that_exist() -> None:
    for guide in GUIDES:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", guide.read_text()):
            assert (guide.parent / target).exists(), f"{guide.name}: broken link {target}"
    assert "(docs/verdict-blocks.md)" in README.read_text()


def test_the_quorum_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "verdict-blocks.md").read_text()
    files = re.findall(r"^`([\w-]+\.md)`:\n\n````markdown\n(.*?)````", page, re.M | re.DOTALL)
    assert [name for name, _ in files] == ["reviewer-1.md", "reviewer-2.md", "reviewer-3.md"]
    for name, body in files:
        (tmp_path / name).write_text(body, encoding="utf-8")
    shown = re.search(r"prints, and exits (\d):\n\n```text\n(.*?)```", page, re.DOTALL)
    assert shown
    result = CliRunner().invoke(app, ["quorum", *(str(tmp_path / n) for n, _ in files)])
    printed = result.output.replace(f"{tmp_path}/", "")
    assert (result.exit_code, printed) == (int(shown.group(1)), shown.group(2))


@pytest.mark.parametrize("guide", GUIDES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_program_the_guides_run_from_the_venv_is_installed(guide: Path) -> None:
    bin_dir = Path(sys.executable).parent  # the .venv running the tests
    for line in _shell_lines(guide):
        for program, rest in re.findall(r"\.venv/bin/([\w.-]+)((?: [\w-]+)?)", line):
            assert (bin_dir / program).exists(), f"{guide.name}: {line!r}: no {program}"
            subcommand = rest.strip()
            if program == "jupyter" and subcommand:  # `jupyter X` runs the program jupyter-X
                assert (bin_dir / f"jupyter-{subcommand}").exists(), f"{guide.name}: {line!r}"
