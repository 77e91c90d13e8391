"""Critics and verdicts: the critic output contract, hollow-code detection, verdict
blocks and the adversarial quorum (SPEC §5). Pure logic; no model calls."""

from critiquebench.critics._blocks import (
    FINDING_ACTIONS,
    JUDGE_VERDICTS,
    BlockParse,
    FindingAction,
    JudgeVerdict,
    parse_verdict_blocks,
)
from critiquebench.critics._critic import (
    CRITIC_SYSTEM,
    REVIEWER_SYSTEM,
    Critic,
    CriticCall,
    CriticResult,
    CriticSettings,
    critic_system,
)
from critiquebench.critics._hollow import HollowFinding, find_hollow
from critiquebench.critics._quorum import (
    FAILING_DECISIONS,
    Decision,
    FindingDecision,
    quorum_exit_code,
    run_quorum_cli,
    tally,
)
from critiquebench.critics._verdict import (
    CRITIC_SCHEMA,
    MAX_ISSUES,
    NO_DEFECTS,
    VERDICTS,
    CriticVerdict,
    ParseMethod,
    ParseOutcome,
    Verdict,
    VerifierPolicy,
    apply_policy,
    parse_critic_output,
)

__all__ = [
    "CRITIC_SCHEMA",
    "CRITIC_SYSTEM",
    "FAILING_DECISIONS",
    "FINDING_ACTIONS",
    "JUDGE_VERDICTS",
    "MAX_ISSUES",
    "NO_DEFECTS",
    "REVIEWER_SYSTEM",
    "VERDICTS",
    "BlockParse",
    "Critic",
    "CriticCall",
    "CriticResult",
    "CriticSettings",
    "CriticVerdict",
    "Decision",
    "FindingAction",
    "FindingDecision",
    "HollowFinding",
    "JudgeVerdict",
    "ParseMethod",
    "ParseOutcome",
    "Verdict",
    "VerifierPolicy",
    "apply_policy",
    "critic_system",
    "find_hollow",
    "parse_critic_output",
    "parse_verdict_blocks",
    "quorum_exit_code",
    "run_quorum_cli",
    "tally",
]
