from __future__ import annotations

from pathlib import Path

import pytest

from critiquebench.critics import (
    BlockParse,
    FindingDecision,
    parse_verdict_blocks,
    quorum_exit_code,
    run_quorum_cli,
    tally,
)


def vote_text(agent: str, **actions: str) -> str:
    lines = [f"agent: {agent}"] + [f"finding: {f} action: {a}" for f, a in actions.items()]
    return "Review.\n```verdict\n" + "\n".join(lines) + "\n```\n"


def vote(agent: str, **actions: str) -> BlockParse:
    return parse_verdict_blocks(vote_text(agent, **actions))


MALFORMED = parse_verdict_blocks("```verdict\nfinding: F1 action: KEEP\n```")  # no agent
NOT_A_JUDGE = parse_verdict_blocks("I agree with everything.")


def decide(*votes: BlockParse, threshold: int = 2) -> str:
    (decision,) = tally(["F1"], list(votes), threshold)
    return decision.decision


def test_reject_majority_kills() -> None:
    assert decide(vote("a", F1="REJECT"), vote("b", F1="REJECT"), vote("c", F1="KEEP")) == "KILL"


def test_reject_plus_downgrade_downgrades() -> None:
    votes = (vote("a", F1="REJECT"), vote("b", F1="DOWNGRADE"), vote("c", F1="KEEP"))
    assert decide(*votes) == "DOWNGRADE"
    assert decide(vote("a", F1="DOWNGRADE"), vote("b", F1="DOWNGRADE")) == "DOWNGRADE"


def test_keep_majority_keeps() -> None:
    assert decide(vote("a", F1="KEEP"), vote("b", F1="KEEP"), vote("c", F1="REJECT")) == "KEEP"


def test_reject_wins_over_keep_when_both_reach_the_threshold() -> None:
    votes = [
        vote(n, F1=a) for n, a in zip("abcd", ["KEEP", "KEEP", "REJECT", "REJECT"], strict=True)
    ]
    assert decide(*votes) == "KILL"


def test_split_vote_is_unverified() -> None:
    votes = (vote("a", F1="KEEP"), vote("b", F1="REJECT"), vote("c", F1="DOWNGRADE"))
    assert decide(*votes, threshold=3) == "UNVERIFIED"


def test_omitting_a_finding_abstains_never_keeps() -> None:
    (decision,) = tally(["F1"], [vote("a", F1="KEEP"), vote("b", F2="KEEP")])
    assert decision == FindingDecision("F1", 1, 0, 0, 1, "UNVERIFIED")


def test_malformed_and_non_judge_reviewers_abstain() -> None:
    (decision,) = tally(["F1"], [vote("a", F1="KEEP"), MALFORMED, NOT_A_JUDGE])
    assert decision == FindingDecision("F1", 1, 0, 0, 2, "UNVERIFIED")


def test_single_reviewer_with_threshold_one() -> None:
    assert decide(vote("a", F1="KEEP"), threshold=1) == "KEEP"


def test_finding_ids_default_to_union_in_first_seen_order() -> None:
    decisions = tally(None, [vote("a", F2="KEEP", F1="KEEP"), vote("b", F3="KEEP", F1="KEEP")])
    assert [d.finding for d in decisions] == ["F2", "F1", "F3"]
    assert [d.decision for d in decisions] == ["UNVERIFIED", "KEEP", "UNVERIFIED"]


def test_given_finding_ids_are_deduplicated_and_unvoted_ones_unverified() -> None:
    decisions = tally(["F9", "F9"], [vote("a", F1="KEEP")])
    assert decisions == [FindingDecision("F9", 0, 0, 0, 1, "UNVERIFIED")]


def test_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError, match="threshold"):
        tally(["F1"], [], threshold=0)


def test_exit_code() -> None:
    def d(decision: str) -> FindingDecision:
        return FindingDecision("F", 0, 0, 0, 0, decision)  # type: ignore[arg-type]

    assert quorum_exit_code([]) == 0
    assert quorum_exit_code([d("KEEP"), d("DOWNGRADE")]) == 0
    assert quorum_exit_code([d("KEEP"), d("KILL")]) == 1
    assert quorum_exit_code([d("UNVERIFIED")]) == 1


def write_votes(tmp_path: Path, *texts: str) -> list[Path]:
    paths = []
    for n, text in enumerate(texts):
        path = tmp_path / f"vote{n}.md"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def test_cli_with_files_all_kept(tmp_path: Path) -> None:
    paths = write_votes(tmp_path, vote_text("a", F1="KEEP"), vote_text("b", F1="KEEP"))
    output, code = run_quorum_cli(paths, None, 2)
    assert code == 0
    header, row, summary = output.splitlines()
    assert header.split() == ["finding", "keep", "downgrade", "reject", "abstain", "decision"]
    assert row.split() == ["F1", "2", "0", "0", "0", "KEEP"]
    assert summary.endswith("-> exit 0")


def test_cli_with_files_reports_kill_and_malformed_reviewer(tmp_path: Path) -> None:
    texts = (vote_text("a", F1="REJECT"), vote_text("b", F1="REJECT"), "```verdict\nagent: c\n```")
    paths = write_votes(tmp_path, *texts)
    output, code = run_quorum_cli(paths, None, 2)
    assert code == 1
    assert "KILL" in output
    assert f"{paths[2]}: abstains: key 'finding'" in output
    assert "(1 without a valid block)" in output


def test_cli_missing_file_names_it(tmp_path: Path) -> None:
    present = write_votes(tmp_path, vote_text("a", F1="KEEP"))
    missing = tmp_path / "nope.md"
    output, code = run_quorum_cli([*present, missing], None, 2)
    assert code == 2
    assert output == f"error: vote file not found: {missing}"


def test_cli_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "binary.md"
    path.write_bytes(b"\xff\xfe\x00bad")
    output, code = run_quorum_cli([path], None, 2)
    assert code == 2
    assert str(path) in output


def test_cli_stdin_blocks_separated_by_dashes() -> None:
    stdin = "\n---\n".join(
        [vote_text("a", F1="KEEP", F2="REJECT"), vote_text("b", F1="KEEP", F2="DOWNGRADE")]
    )
    output, code = run_quorum_cli(None, stdin + "\n---\n", 2)
    assert code == 0
    rows = [line.split() for line in output.splitlines()[1:3]]
    assert rows == [["F1", "2", "0", "0", "0", "KEEP"], ["F2", "0", "1", "1", "0", "DOWNGRADE"]]
    assert "2 reviewers" in output


def test_cli_stdin_error_lines_count_from_the_chunk_top() -> None:
    stdin = vote_text("a", F1="KEEP") + "---\n" + "```verdict\nagent: b\nfinding: F1 action: ?\n```"
    output, code = run_quorum_cli(None, stdin, 1)
    assert code == 0
    assert "stdin #2: abstains: line 3: unknown action '?'" in output


def test_cli_nothing_to_tally_is_not_a_pass() -> None:
    output, code = run_quorum_cli(None, "no block here", 2)
    assert code == 1
    assert "no findings" in output
    assert "stdin #1: abstains: no verdict block" in output


@pytest.mark.parametrize(("paths", "stdin"), [(None, None), ([], "  \n---\n ")])
def test_cli_without_votes(paths: list[Path] | None, stdin: str | None) -> None:
    output, code = run_quorum_cli(paths, stdin, 2)
    assert code == 2
    assert "no votes" in output


def test_cli_rejects_bad_threshold() -> None:
    output, code = run_quorum_cli(None, vote_text("a", F1="KEEP"), 0)
    assert code == 2
    assert "threshold" in output


def test_cli_directory_is_unreadable_not_missing(tmp_path: Path) -> None:
    output, code = run_quorum_cli([tmp_path], None, 2)
    assert code == 2
    assert output.startswith(f"error: cannot read vote file {tmp_path}")
