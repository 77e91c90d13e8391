"""The separate-context critic and the adversarial quorum, as model calls.

A critic sees the task and the candidate only, never the actor's messages: its
own system prompt, its own call. Quorum reviewers are independent calls too,
each voting on every finding of the primary critic.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from dataclasses import dataclass
from typing import Any

from critiquebench.critics._blocks import BlockParse, parse_verdict_blocks
from critiquebench.critics._hollow import find_hollow
from critiquebench.critics._quorum import FindingDecision, tally
from critiquebench.critics._verdict import (
    CRITIC_SCHEMA,
    CriticVerdict,
    ParseOutcome,
    VerifierPolicy,
    apply_policy,
    parse_critic_output,
)
from critiquebench.judges import PYTHON_FORMAT, ArtifactFormat, PythonFormat
from critiquebench.models import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
    ModelProvider,
    Role,
)

CODE_REVIEW = (
    "You review a candidate answer to a programming task. You did not write it. Look for: "
    "not doing what was asked; logic or factual errors; undefined names, wrong imports or "
    "wrong paths; violations of the task's stated requirements."
)
"""What a critic reviews unless the artifact's format says otherwise."""
CRITIC_REPLY = (
    "Reply with JSON only: "
    '{"verdict": "pass"|"warn"|"fail", "issues": [at most 5 short strings, each naming '
    'a location], "summary": "<one line>"}. If nothing is wrong, reply NO_DEFECTS.'
)
"""How every critic replies, whatever it reviews (the schema it is held to)."""


def critic_system(review: str = "") -> str:
    """The critic's system prompt: what it reviews (``review``, e.g. an
    :class:`~critiquebench.judges.ArtifactFormat`'s ``review``; empty = code), then
    how to reply."""
    return f"{review.strip() or CODE_REVIEW} {CRITIC_REPLY}"


CRITIC_SYSTEM = critic_system()
"""The critic's system prompt for Python code (and any format without a review)."""
CRITIC_TEMPLATE = "Task:\n{task}\n\nCandidate:\n{candidate}"
REVIEWER_SYSTEM = (
    "You check another reviewer's findings about a candidate answer. For each finding "
    "decide KEEP (real and important), DOWNGRADE (real but minor) or REJECT (wrong). "
    "Reply with one fenced block whose info string is verdict, e.g.\n"
    "```verdict\nagent: reviewer\nfinding: F1 action: KEEP\nfinding: F2 action: REJECT\n```"
)
REVIEWER_TEMPLATE = "{review}\n\nFindings:\n{findings}"


@dataclass(frozen=True, kw_only=True)
class CriticSettings:
    """How critics run in a loop."""

    policy: VerifierPolicy = "fail_open"
    """What an unusable critic reply means: fail_open = pass, fail_closed = fail."""
    reviewers: int = 0
    """Quorum reviewers voting on each finding (0 = no quorum)."""
    threshold: int = 1
    """Votes a quorum decision needs."""
    max_tokens: int = 320
    """Above the bounded schema's worst case, so a constrained reply is never cut off."""


@dataclass(frozen=True)
class CriticCall:
    """One critic or reviewer call: the completion (None if the call failed) and its parse."""

    role: Role
    completion: Completion | None
    parse_method: str
    verifier_error: str | None
    messages: tuple[Message, ...] = ()
    """What the call was asked (kept for the run's transcripts)."""
    parsed: str | None = None
    """JSON: what was read from the reply (a verdict, or a reviewer's actions); None
    when nothing could be read."""


@dataclass(frozen=True)
class CriticResult:
    """The verdict acted on, the findings that reach the fixer, and the calls behind it."""

    verdict: CriticVerdict
    findings: tuple[str, ...]
    calls: tuple[CriticCall, ...] = ()
    killed: int = 0
    decisions: tuple[FindingDecision, ...] = ()

    @property
    def ok(self) -> bool:
        """True when nothing is left for the fixer."""
        return not self.findings

    @property
    def verifier_errors(self) -> int:
        """Calls that failed or whose reply could not be used."""
        return sum(1 for call in self.calls if call.verifier_error)


def _seed(context: CallContext, role: str, index: int) -> int:
    return zlib.crc32(f"{context.case_id}|{context.rep}|{context.attempt}|{role}|{index}".encode())


class Critic:
    """Runs the critic, and the quorum when configured, on one candidate."""

    def __init__(self, provider: ModelProvider, settings: CriticSettings) -> None:
        self.provider = provider
        self.settings = settings

    def __call__(
        self,
        task: str,
        candidate: str,
        context: CallContext,
        *,
        form: ArtifactFormat = PYTHON_FORMAT,
    ) -> CriticResult:
        """Review ``candidate`` for ``task``; hollow Python code fails without a model call.

        ``form`` is the artifact's format: the candidate is shown as the format shows
        an answer (a decision as a plain word), and the critic is told what it reviews
        (``form.review``).
        """
        hollow = find_hollow(candidate) if isinstance(form, PythonFormat) else []
        if hollow:
            issues = tuple(str(finding) for finding in hollow[:5])
            return CriticResult(CriticVerdict("fail", issues, "hollow code"), issues)
        # Python code is shown as it was before artifact formats existed (unstripped), so
        # the call cache and replay files of earlier runs still match these prompts.
        shown = (
            f"```python\n{candidate}\n```"
            if isinstance(form, PythonFormat)
            else form.fenced(candidate)
        )
        prompt = CRITIC_TEMPLATE.format(task=task, candidate=shown)
        system = critic_system(form.review)
        messages = _messages(system, prompt)
        completion, error = self._call("critic", 0, messages, CRITIC_SCHEMA, context)
        outcome = (
            parse_critic_output(completion.text)
            if completion is not None
            else ParseOutcome(None, "unparseable", f"call failed: {error}")
        )
        verdict = apply_policy(outcome, self.settings.policy)
        call = CriticCall(
            "critic",
            completion,
            outcome.method,
            None if outcome.verdict else outcome.error,
            messages,
            _verdict_json(outcome.verdict),
        )
        findings = verdict.issues
        if verdict.verdict != "pass" and not findings:
            findings = (verdict.summary or f"the critic's verdict is {verdict.verdict}",)
        if verdict.verdict == "pass":
            findings = ()
        result = CriticResult(verdict, findings, (call,))
        if self.settings.reviewers and findings:
            return self._quorum(result, prompt, context)
        return result

    def _quorum(self, result: CriticResult, review: str, context: CallContext) -> CriticResult:
        ids = [f"F{n}" for n in range(1, len(result.findings) + 1)]
        listing = "\n".join(f"{i}: {text}" for i, text in zip(ids, result.findings, strict=True))
        prompt = REVIEWER_TEMPLATE.format(review=review, findings=listing)
        votes, calls = [], list(result.calls)
        messages = _messages(REVIEWER_SYSTEM, prompt)
        for index in range(self.settings.reviewers):
            completion, error = self._call("reviewer", index, messages, None, context)
            block = parse_verdict_blocks(completion.text if completion else "")
            problem = error or ("; ".join(block.errors) if block.errors else None)
            if completion is not None and not block.is_judge:
                problem = "no verdict block in the reviewer's reply"
            parsed = _block_json(block) if completion is not None else None
            calls.append(CriticCall("reviewer", completion, "block", problem, messages, parsed))
            votes.append(block)  # a malformed or missing block abstains in the tally
        decisions = tally(ids, votes, self.settings.threshold)
        # UNVERIFIED findings stay: uncertainty refutes nothing, so it never counts as a pass.
        kept = tuple(
            text
            for text, decision in zip(result.findings, decisions, strict=True)
            if decision.decision != "KILL"
        )
        return dataclasses.replace(
            result,
            findings=kept,
            calls=tuple(calls),
            killed=len(result.findings) - len(kept),
            decisions=tuple(decisions),
        )

    def _call(
        self,
        role: Role,
        index: int,
        messages: tuple[Message, ...],
        schema: dict[str, Any] | None,
        context: CallContext,
    ) -> tuple[Completion | None, str | None]:
        params = GenerationParams(
            temperature=0.2, max_tokens=self.settings.max_tokens, seed=_seed(context, role, index)
        )
        # The provider sees the true role: a reviewer's call is recorded as "reviewer".
        call_context = dataclasses.replace(context, role=role)
        try:
            return self.provider.complete(list(messages), params, schema, call_context), None
        except ModelError as exc:
            return None, str(exc)


def _messages(system: str, prompt: str) -> tuple[Message, ...]:
    return (Message("system", system), Message("user", prompt))


def _verdict_json(verdict: CriticVerdict | None) -> str | None:
    if verdict is None:
        return None
    return json.dumps(
        {"verdict": verdict.verdict, "issues": list(verdict.issues), "summary": verdict.summary}
    )


def _block_json(block: BlockParse) -> str:
    return json.dumps(
        {
            "is_verdict_block": block.is_judge,
            "actions": {finding: str(action) for finding, action in block.findings.items()},
            "errors": list(block.errors),
        },
        sort_keys=True,
    )
