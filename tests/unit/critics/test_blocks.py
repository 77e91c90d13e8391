from __future__ import annotations

import pytest

from critiquebench.critics import BlockParse, parse_verdict_blocks

STANDARD = "agent: alice\nverdict: not-ready\nblocking: 2\nshould_fix: 1\nadvisory: 0"


def block(body: str, info: str = "verdict") -> str:
    return f"Some prose about the change.\n\n```{info}\n{body}\n```\nSigned."


def one_error(body: str) -> str:
    parse = parse_verdict_blocks(block(body))
    assert parse.is_judge
    assert len(parse.errors) == 1, parse.errors
    return parse.errors[0]


def test_no_block_is_not_a_judge() -> None:
    parse = parse_verdict_blocks("Looks good to me.\n```python\nverdict: ready\n```")
    assert parse == BlockParse(is_judge=False)
    assert not parse.valid


@pytest.mark.parametrize("info", ["verdict", "wiki-verdict"])
def test_standard_block(info: str) -> None:
    parse = parse_verdict_blocks(block(STANDARD, info))
    assert parse.valid
    assert (parse.agent, parse.verdict) == ("alice", "not-ready")
    assert (parse.blocking, parse.should_fix, parse.advisory) == (2, 1, 0)
    assert parse.findings == {}


def test_ready_and_blocked_verdicts() -> None:
    ready = STANDARD.replace("not-ready", "ready").replace("blocking: 2", "blocking: 0")
    assert parse_verdict_blocks(block(ready)).valid
    blocked = STANDARD.replace("not-ready", "blocked").replace("blocking: 2", "blocking: 0")
    assert parse_verdict_blocks(block(blocked)).verdict == "blocked"


def test_per_finding_block() -> None:
    body = "agent: bob\nfinding: F-1 action: KEEP\n# a comment\n\nfinding: F-2 action: REJECT"
    parse = parse_verdict_blocks(block(body))
    assert parse.valid
    assert parse.findings == {"F-1": "KEEP", "F-2": "REJECT"}
    assert parse.verdict is None


def test_standard_and_finding_blocks_merge_and_unterminated_block_counts() -> None:
    text = block(STANDARD) + "\n```verdict\nfinding: F1 action: DOWNGRADE\n"
    parse = parse_verdict_blocks(text)
    assert parse.valid
    assert parse.findings == {"F1": "DOWNGRADE"}
    assert parse.blocking == 2


def test_missing_agent() -> None:
    assert "'agent'" in one_error("finding: F1 action: KEEP")
    assert "'agent'" in one_error("agent:\nfinding: F1 action: KEEP")


def test_unknown_verdict_names_its_line() -> None:
    error = one_error(STANDARD.replace("not-ready", "approved"))
    assert error.startswith("line 5:")
    assert "'approved'" in error


@pytest.mark.parametrize("value", ["two", "-1", "1.5", "", "٣"])
def test_non_integer_count(value: str) -> None:
    error = one_error(STANDARD.replace("should_fix: 1", f"should_fix: {value}"))
    assert error.startswith("line 7: should_fix")


def test_missing_standard_key() -> None:
    error = one_error(STANDARD.replace("advisory: 0", ""))
    assert "'advisory'" in error


def test_ready_with_blockers_is_a_contradiction() -> None:
    error = one_error(STANDARD.replace("not-ready", "ready"))
    assert error.startswith("line 5:")
    assert "blocking=2" in error


def test_not_ready_without_blockers_is_a_contradiction() -> None:
    error = one_error(STANDARD.replace("blocking: 2", "blocking: 0"))
    assert "not-ready" in error
    assert "blocking=0" in error


def test_unknown_action() -> None:
    error = one_error("agent: bob\nfinding: F1 action: keep")
    assert error == "line 5: unknown action 'keep' for finding 'F1'"


def test_malformed_finding_line() -> None:
    error = one_error("agent: bob\nfinding: F1 KEEP")
    assert error.startswith("line 5: key 'finding'")


def test_conflicting_actions_for_one_finding() -> None:
    error = one_error("agent: bob\nfinding: F1 action: KEEP\nfinding: F1 action: REJECT")
    assert "conflicting" in error
    assert "'F1'" in error


def test_per_finding_block_without_findings() -> None:
    error = one_error("agent: bob")
    assert "'finding'" in error


def test_unknown_key_duplicate_key_and_bad_line() -> None:
    body = STANDARD + "\ncolour: red\nagent: carol\njust words"
    parse = parse_verdict_blocks(block(body))
    assert parse.errors == [
        "line 9: unknown key 'colour'",
        "line 10: duplicate key 'agent'",
        "line 11: expected 'key: value', got 'just words'",
    ]
    assert not parse.valid
