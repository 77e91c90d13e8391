"""Bad ``run`` input is refused up front: exit 2, one line, no traceback, no run folder.

The main cases drive the installed ``critiquebench`` in a subprocess, as a user
would; before the preflight checks each of them started Prefect's temporary server
(~10 s) and ended in a traceback. That no server is waited for is shown by what it
leaves behind (no Prefect home), not by a time bound: the machine may be busy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.models import ModelSpecError, check_model_spec
from critiquebench.models._gemini import SECRET_BLOCK_VARIABLE
from tests.integration.replay_run import write_replay_file

_CLI = str(Path(sys.executable).with_name("critiquebench"))
_KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY", SECRET_BLOCK_VARIABLE)
runner = CliRunner()


def _refuse(tmp_path: Path, *args: str) -> str:
    """Run the CLI with ``args``; assert a one-line refusal before Prefect starts; return
    that line."""
    env = {k: v for k, v in os.environ.items() if k not in _KEY_VARIABLES}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    completed = subprocess.run(
        [_CLI, "run", *args, "--output", "out"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    output = completed.stdout + completed.stderr
    assert completed.returncode == 2, output
    assert "Traceback" not in output
    lines = output.splitlines()
    assert len(lines) == 1, output
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "prefect").exists()  # Prefect was never started
    return lines[0]


def test_unknown_provider_is_refused_at_once(tmp_path: Path) -> None:
    line = _refuse(tmp_path, "--model", "nosuch")
    assert "--model nosuch: unknown provider 'nosuch'" in line
    assert "openai:MODEL@URL" in line  # the fix: the specs that exist


def test_gemini_without_a_key_is_refused_at_once(tmp_path: Path) -> None:
    line = _refuse(tmp_path, "--model", "gemini")
    assert "--model gemini: no API key" in line
    for name in _KEY_VARIABLES:
        assert name in line


def test_missing_replay_file_is_refused_at_once(tmp_path: Path) -> None:
    line = _refuse(tmp_path, "--model", "replay:missing.jsonl")
    assert "--model replay:missing.jsonl: no such file: missing.jsonl" in line


def test_malformed_replay_file_names_option_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"case_id": "x", "answers": ["a"]}\n{"oops": 1}\n')
    line = _refuse(tmp_path, "--model", "replay:bad.jsonl")
    assert line.startswith("error: --model replay:bad.jsonl: bad.jsonl:2: ")


@pytest.mark.parametrize("target", ["5", "0", "-0.5", "1.5"])
def test_target_outside_zero_to_one_is_refused(tmp_path: Path, target: str) -> None:
    line = _refuse(tmp_path, "--target", target)
    assert f"--target {float(target):g}: the target is a fraction in (0, 1]" in line


@pytest.mark.parametrize("arms", ["B", "B,C"])
def test_a_run_without_the_baseline_arm_is_refused(tmp_path: Path, arms: str) -> None:
    line = _refuse(tmp_path, "--arms", arms)
    assert f"--arms {arms}: arm A is missing" in line and "baseline" in line
    assert f"--arms A,{arms}" in line


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:", "openai needs a model and a server"),
        ("openai:qwen", "openai needs a model and a server"),
        ("openai:qwen@localhost:11434", "'localhost:11434' is not an http(s) URL"),
        ("gemini:gemini-2.5-pro@", "'' is not an http(s) URL"),
        ("local:missing.gguf", "no such file: missing.gguf"),
        ("local:notes.txt", "notes.txt is not a GGUF model file"),
        ("replay:", "replay needs a file"),
        ("replay:folder", "folder is not a file"),
        ("replay:latin1.jsonl", "latin1.jsonl: not UTF-8 text"),
        ("sim:fix=2", "sim model setting fix must be in [0, 1]"),
        ("sim:bogus=1", "sim model setting 'bogus=1'"),
        ("sim:fix=x", "sim model setting fix='x': not a float"),
    ],
)
def test_malformed_specs_are_one_literal_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("not a model\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "latin1.jsonl").write_bytes('{"case_id": "é"}\n'.encode("latin-1"))
    result = runner.invoke(app, ["run", "--model", spec, "--output", "out"])
    assert result.exit_code == 2, result.output
    # Printed literally: no Rich markup eaten ("[0, 1]"), no emoji codes (":qwen@...").
    (line,) = result.output.splitlines()
    assert line.startswith(f"error: --model {spec}: {expected}"), result.output
    assert not (tmp_path / "out").exists()


def test_a_named_secret_block_passes_without_a_server(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ModelSpecError, match="no API key"):
        check_model_spec("gemini")
    # Only the provider can read a block (that needs Prefect); the check trusts the name.
    monkeypatch.setenv(SECRET_BLOCK_VARIABLE, "gemini-key")
    check_model_spec("gemini:gemini-2.5-pro")


def test_the_key_is_never_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "sk-FAKE-preflight-1234")
    result = runner.invoke(app, ["run", "--model", "gemini:m@nowhere", "--output", "o"])
    assert result.exit_code == 2
    assert "sk-FAKE" not in result.output and "'nowhere' is not an http(s) URL" in result.output


def test_good_specs_pass_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = write_replay_file(tmp_path / "replay.jsonl", 2)
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(16))
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    for spec in (
        f"replay:{replay}", "sim:fix=0.6,het=0.5", "sim", f"local:{gguf}", "local",
        "gemini", "gemini:gemini-2.5-pro@http://127.0.0.1:9",
        "openai:qwen2.5-coder:7b@http://localhost:11434",
    ):  # fmt: skip
        check_model_spec(spec)
