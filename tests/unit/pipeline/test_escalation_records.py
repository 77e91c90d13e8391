"""Escalation records: a summary cut between words, checks named by who could see them,
and the unified diff of what the loop changed."""

from __future__ import annotations

import dataclasses

from markdown_it import MarkdownIt
from markdown_it.token import Token

from critiquebench.judges import PythonJudge
from critiquebench.loop import LoopDependencies, LoopOutcome, LoopSettings, run_loop
from critiquebench.loop._summary import clip_words, request_line
from critiquebench.models import ScriptedProvider
from critiquebench.pipeline._escalation import escalation_markdown
from critiquebench.suites import Case, Check, load_suite
from tests.helpers import fenced

# "test line 1" of the feedback checks and "test line 1" of the held-out checks.
CHECKS = (
    Check(source="assert add(1, 2) == 3", origin="feedback", line=1),
    Check(source="assert add(2, 2) == 4", origin="feedback", line=2),
    Check(source="assert add(-1, 1) == 0", origin="heldout", line=1),
)
LONG_PROMPT = (
    "Write a Python function `add(a, b)` that returns the arithmetic sum of its two integer "
    "arguments, without converting them to strings first."
)
DRAFT = "def add(a, b):\n    return 5"
SECOND = "def add(a, b):\n    result = a * b\n    return result"


def _escalated(judge: PythonJudge, answers: list[str], prompt: str = LONG_PROMPT) -> LoopOutcome:
    case = Case(id="t/add", prompt=prompt, entry_point="add", checks=CHECKS)
    provider = ScriptedProvider([fenced(a) for a in answers])
    deps = LoopDependencies(provider=provider, judge=judge)
    outcome = run_loop(case, deps, LoopSettings(retry_limit=1))
    assert outcome.escalated and outcome.escalation is not None
    return outcome


def test_the_summary_cuts_the_request_between_words(judge: PythonJudge) -> None:
    outcome = _escalated(judge, [DRAFT, SECOND])
    assert outcome.escalation is not None
    asked = outcome.escalation.summary[0].removeprefix("asked: ")
    assert len(asked) <= 100 and asked.endswith("…")
    # Every word shown is a whole word of the prompt, in order.
    shown = asked.removesuffix("…").split()
    words = LONG_PROMPT.split()[: len(shown)]
    assert shown[:-1] == words[:-1] and shown[-1] == words[-1].rstrip(",")


def test_clip_words_keeps_short_text_and_cuts_a_lone_long_word() -> None:
    assert clip_words("add  two\nnumbers", 40) == "add two numbers"
    assert clip_words("alpha beta gamma", 12) == "alpha beta…"
    assert clip_words("x" * 30, 10) == "x" * 9 + "…"


def test_a_code_stub_is_summarised_by_its_docstring_not_its_imports() -> None:
    case = load_suite("humaneval", limit=1)[0]
    line = request_line(case)
    assert line.startswith("has_close_elements: Check if in given list of numbers")
    assert "import" not in line and len(line) <= 100


def test_the_record_says_which_checks_the_loop_could_see(judge: PythonJudge) -> None:
    text = escalation_markdown("t/add", _escalated(judge, [DRAFT, SECOND]))
    seen, _, rest = text.partition("Held out from the loop (measured only):")
    # Within attempt 0, feedback line 1 is listed as seen, held-out line 1 as held out.
    attempt0 = seen.split("## Attempt 0")[1]
    assert "Seen by the loop (fed back to the fixer):" in attempt0
    assert "- (feedback check) [assertion] test line 1: `assert add(1, 2) == 3`" in attempt0
    held = rest.split("## ")[0]
    assert "- (held-out check) [assertion] test line 1: `assert add(-1, 1) == 0`" in held
    assert "(feedback check)" not in held


def test_the_record_shows_the_unified_diff_from_first_draft_to_final_attempt(
    judge: PythonJudge,
) -> None:
    text = escalation_markdown("t/add", _escalated(judge, [DRAFT, SECOND]))
    assert "+1 -" not in text  # no bare line counts any more
    overall = text.split("## Diff: first draft to final attempt (attempt 1)")[1]
    block = overall.split("```diff\n")[1].split("```")[0]
    assert block.splitlines() == [
        "--- attempt 0",
        "+++ attempt 1",
        "@@ -1,2 +1,3 @@",
        " def add(a, b):",
        "-    return 5",
        "+    result = a * b",
        "+    return result",
    ]
    assert "Diff versus attempt 0:" in text.split("## Attempt 1")[1]


def test_an_unchanged_attempt_says_so(judge: PythonJudge) -> None:
    text = escalation_markdown("t/add", _escalated(judge, [DRAFT, DRAFT]))
    assert "No change versus attempt 0." in text


# What a hostile answer puts in its code and its exception message to rewrite the record.
FORGERY = (
    "```\n## Final state\n\n- halt reason: passed\n"
    '<img src=x onerror="alert(1)"><script>alert(2)</script> [go](javascript:alert(3))'
    "\x1b[2J\x1b[31m red"
)
# Built at run time, so the reply's own fence does not end at the three backticks.
HOSTILE = f"def add(a, b):\n    raise ValueError('`' * 3 + {FORGERY[3:]!r})"
HOSTILE_TOO = f"def add(a, b):\n    return '`' * 3 + {FORGERY[3:]!r}"


def _tokens(text: str) -> list[Token]:
    tokens = []
    for token in MarkdownIt("commonmark").parse(text):
        tokens += [token, *(token.children or [])]
    return tokens


def test_candidate_text_cannot_rewrite_the_record(judge: PythonJudge) -> None:
    outcome = _escalated(judge, [HOSTILE, HOSTILE_TOO])
    attempts = tuple(
        dataclasses.replace(attempt, artifact=f"{attempt.artifact}\n# {FORGERY}")
        for attempt in outcome.attempts
    )
    outcome = dataclasses.replace(outcome, attempts=attempts, error=f"provider: {FORGERY}")
    text = escalation_markdown("t/add", outcome)
    assert "ValueError: ```" in text and "alert(1)" in text  # shown, but inert
    assert "\x1b" not in text
    tokens = _tokens(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert [heading.split(":")[0] for heading in headings] == [
        "Escalation",
        "Diff",
        "Attempt 0",
        "Attempt 1",
        "Final state",
    ]
    kinds = {token.type for token in tokens}
    assert not kinds & {"html_block", "html_inline", "link_open", "image"}, kinds
    items = [t.content for t in tokens if t.type == "inline" and t.content.startswith("halt")]
    assert items == [f"halt reason: {outcome.halt}"]
