"""Turn a promptfoo output file (``promptfoo eval -o out.json``) into a replay file."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from critiquebench.models._import_inspect import ImportFormatError
from critiquebench.models._replay import AnswerCost, ReplayLine


def _results(path: Path, document: Any) -> list[dict[str, Any]]:
    results = document.get("results") if isinstance(document, dict) else None
    if isinstance(results, dict):  # promptfoo >= 0.x writes {"results": {"results": [...]}}
        results = results.get("results")
    if not isinstance(results, list):
        raise ImportFormatError(
            f"{path}: no results list (expected the JSON of `promptfoo eval -o FILE.json`)"
        )
    return [item for item in results if isinstance(item, dict)]


def _case_id(path: Path, index: int, result: dict[str, Any]) -> str:
    test = _mapping(result.get("testCase"))
    for source in (
        result.get("vars"),
        test.get("vars"),
        test.get("metadata"),
        result.get("metadata"),
    ):
        if isinstance(source, dict) and isinstance(source.get("case_id"), str):
            return str(source["case_id"])
    raise ImportFormatError(
        f"{path}: results[{index}] has no case_id; add a var `case_id` (the suite's case "
        "id) to each test of the promptfoo config"
    )


def _provider(result: dict[str, Any]) -> str:
    provider = result.get("provider")
    if isinstance(provider, dict):
        return str(provider.get("id") or provider.get("label") or "")
    return str(provider or "")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def promptfoo_replay_lines(path: Path, provider: str | None = None) -> list[ReplayLine]:
    """One replay line per case and repetition of the provider's results in ``path``.

    Each result needs a ``case_id`` (a test var or metadata). A case's results, in
    file order, are its reps (``repeat`` in promptfoo). A file with several
    providers needs ``provider`` to say which is the arm. A result with an error
    answers the empty string (a failed answer, never a missing one).
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportFormatError(f"{path}: not a promptfoo JSON output ({exc})") from None
    results = _results(path, document)
    providers = sorted({_provider(result) for result in results})
    if provider is None and len(providers) > 1:
        raise ImportFormatError(
            f"{path}: results of {len(providers)} providers ({', '.join(providers)}); choose "
            "one with --provider"
        )
    if provider is not None:
        if provider not in providers:
            raise ImportFormatError(
                f"{path}: no results of provider {provider!r}; it has {', '.join(providers)}"
            )
        results = [result for result in results if _provider(result) == provider]
    reps: dict[str, int] = defaultdict(int)
    lines: list[ReplayLine] = []
    for index, result in enumerate(results):
        case_id = _case_id(path, index, result)
        response = _mapping(result.get("response"))
        output = response.get("output")
        failed = result.get("error") or not isinstance(output, str)
        answer = "" if failed else str(output)
        usage = _mapping(response.get("tokenUsage") or result.get("tokenUsage"))
        cost = AnswerCost(
            int(_number(usage.get("prompt"))),
            int(_number(usage.get("completion"))),
            _number(result.get("latencyMs")) / 1000.0,
        )
        lines.append(ReplayLine(case_id, (answer,), reps[case_id], (cost,)))
        reps[case_id] += 1
    if not lines:
        raise ImportFormatError(f"{path}: no results to import")
    return lines
