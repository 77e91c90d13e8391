"""Turn an inspect_ai eval log into a replay file: each sample's answer is one case's.

inspect_ai is imported only here, when a log is imported: it is a development extra,
never needed to run or report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from critiquebench.models._replay import AnswerCost, ReplayFormatError, ReplayLine


class ImportFormatError(ReplayFormatError):
    """An eval log or output file that cannot become a replay file; says where and why."""


def _case_id(sample: Any) -> str:
    metadata = sample.metadata or {}
    value = metadata.get("case_id", sample.id)
    return str(value)


def _usage(sample: Any) -> tuple[int, int]:
    tokens_in = tokens_out = 0
    for usage in (sample.model_usage or {}).values():
        tokens_in += int(usage.input_tokens or 0)
        tokens_out += int(usage.output_tokens or 0)
    return tokens_in, tokens_out


def inspect_replay_lines(log_path: Path) -> list[ReplayLine]:
    """One replay line per sample and epoch of the log at ``log_path``.

    The case id is the sample's ``metadata["case_id"]`` when present, else its id;
    the rep is the epoch less one. The answer is the sample's final completion (the
    system is judged as a whole, whatever turns it took); a sample that ended in an
    error answers the empty string, so it counts as a failed answer, not a missing
    one. Tokens are the sample's model usage over every model it called; latency its
    working time (else its total time).
    """
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(log_path))
    except (OSError, ValueError) as exc:
        raise ImportFormatError(f"{log_path}: not an inspect_ai eval log ({exc})") from None
    if not log.samples:
        raise ImportFormatError(
            f"{log_path}: the log holds no samples (status {log.status}); import a log of "
            "a finished eval, written with its samples"
        )
    lines: list[ReplayLine] = []
    seen: set[tuple[str, int]] = set()
    for sample in log.samples:
        case_id, rep = _case_id(sample), int(sample.epoch) - 1
        if (case_id, rep) in seen:
            raise ImportFormatError(
                f"{log_path}: sample {case_id!r} epoch {sample.epoch} appears twice; give "
                "each sample a distinct id or metadata case_id"
            )
        seen.add((case_id, rep))
        answer = "" if sample.error is not None else sample.output.completion
        tokens_in, tokens_out = _usage(sample)
        latency = float(sample.working_time or sample.total_time or 0.0)
        cost = AnswerCost(tokens_in, tokens_out, latency)
        lines.append(ReplayLine(case_id, (answer,), rep, (cost,)))
    return lines
