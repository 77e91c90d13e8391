"""The replay provider: answers per case and per rep, validated with file:line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from critiquebench.models import (
    CallContext,
    GenerationParams,
    ModelError,
    ReplayFormatError,
    ReplayProvider,
    load_replay_file,
)


def _write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "replay.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def _answer(provider: ReplayProvider, case_id: str, rep: int, attempt: int = 0) -> str:
    context = CallContext(case_id=case_id, rep=rep, attempt=attempt)
    return provider.complete([], GenerationParams(), context=context).text


def test_reps_get_their_own_answers_and_fall_back_to_the_repless_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"case_id": "c", "answers": ["default-0", "default-1"]},
        {"case_id": "c", "rep": 1, "answers": ["rep1-0", "rep1-1"]},
        {"case_id": "d", "rep": 0, "answers": ["d-rep0"]},
    )
    provider = ReplayProvider(path)
    assert _answer(provider, "c", rep=0) == "default-0"
    assert [_answer(provider, "c", rep=1, attempt=n) for n in range(3)] == [
        "rep1-0",
        "rep1-1",
        "rep1-1",  # out of answers: the last one repeats
    ]
    assert _answer(provider, "c", rep=2) == "default-0"
    assert _answer(provider, "d", rep=0) == "d-rep0"
    with pytest.raises(ModelError, match=r"no answers for case 'd' \(rep 1\)"):
        _answer(provider, "d", rep=1)


def test_missing_lists_cases_and_reps_without_answers(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"case_id": "all", "answers": ["x"]},
        {"case_id": "some", "rep": 0, "answers": ["x"]},
        {"case_id": "some", "rep": 2, "answers": ["x"]},
    )
    replay = load_replay_file(path)
    assert replay.missing(["all", "some", "none"], reps=3) == ["some (rep 1)", "none"]
    assert replay.missing(["all", "some"], reps=1) == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a"]', "expected"),
        ({"case_id": "c", "answers": []}, "expected"),
        ({"case_id": "c", "answers": [1]}, "every answer must be a string"),
        ({"case_id": "c", "rep": -1, "answers": ["x"]}, "rep must be a whole number >= 0"),
        ({"case_id": "c", "rep": "1", "answers": ["x"]}, "rep must be a whole number >= 0"),
        ({"case_id": "c", "rep": True, "answers": ["x"]}, "rep must be a whole number >= 0"),
        ({"case_id": "c", "answers_by_rep": [["x"]]}, "unknown field(s) answers_by_rep"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, line: object, message: str) -> None:
    path = _write(tmp_path, {"case_id": "ok", "answers": ["x"]}, "", line)
    with pytest.raises(ReplayFormatError) as caught:
        load_replay_file(path)
    assert str(caught.value).startswith(f"{path}:3: ")
    assert message in str(caught.value)


def test_a_case_and_rep_given_twice_is_an_error(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"case_id": "c", "rep": 1, "answers": ["x"]},
        {"case_id": "c", "answers": ["y"]},
        {"case_id": "c", "rep": 1, "answers": ["z"]},
    )
    already = r":3: case 'c' \(rep 1\) was already given at line 1"
    with pytest.raises(ReplayFormatError, match=already):
        load_replay_file(path)
