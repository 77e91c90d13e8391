"""A simulated model with a known, planted effect: ``--model sim:fix=0.6,het=0.5``.

It answers with real code that the real judge scores: a case's
``reference_solution`` when the simulated answer is correct, a deterministic
mutation of it when buggy (every return value perturbed: ``n + 1``, ``not b``,
``s + "?"``, a list with an extra ``None``...), and when broken, that mutation
with a syntax error (one more defect than buggy, as every check goes ``not_run``).

The generative model, per case ``c`` and rep ``r``, with ``u_c ~ N(0, het^2)``
(case difficulty, shared by the case's reps) and ``e_cr ~ N(0, noise^2)``:

- the first draft is buggy with probability ``b = sigmoid(logit(draft) + u_c + e_cr)``;
- each fix round turns a buggy answer correct with ``p = sigmoid(logit(fix) - u_c - e_cr)``;
  a round that does not fix breaks the answer further with probability ``regress``;
  a round on a correct answer (critic arms) breaks it with ``regress``.

Hard cases are both buggier and harder to fix, as in real suites. The test-fed
loop (arm B) stops at the first correct answer and keeps the best attempt, so
``regress`` changes the latest-attempt curve but not the kept answer, and with
``R`` fix rounds the kept answer is still buggy with probability ``b (1 - p)^R``.
The planted population reduction of arm B vs arm A is therefore

    1 - E[b (1 - p)^R] / E[b],   over s = u + e ~ N(0, het^2 + noise^2),

(defect counts per buggy answer are the same in both arms and cancel), computed
exactly by :func:`true_reduction`. Every draw is a hash of (seed, case, rep,
round), so answers are deterministic, cacheable, equal across arms for the same
(case, rep) and different across reps. The critic answers NO_DEFECTS unless one of
the critic settings below is set; the reviewers of a quorum always abstain.

The settings below serve the resampling arm and the fix/break rates (all off by default,
and left out of the model spec while off, so older specs and caches stay as they were):

- an actor call after the first (``attempt = k > 0``: the resampling arm's fresh
  drafts) is a new first draft, buggy with the same probability ``b`` as draft 0 and
  drawn independently of it and of the fix rounds, so ``k`` drafts all stay buggy
  with probability ``b^k`` (:func:`true_resample_reduction`);
- ``prompt_tokens=N`` reports ``N`` prompt tokens per call instead of the prompt's
  word count, so every call costs the same and a token budget is a number of calls;
- ``recall=q`` and ``false_alarm=f``: the critic flags an answer that is not correct
  (buggy, broken, or gaming a canary) with probability ``q`` and a correct one with
  probability ``f``, each review drawn on its own, so critic arms can be rehearsed
  and the report's measured critic recall and false-alarm rate checked against them;
- ``nag=q``: the critic flags an answer with probability ``q`` whatever its state (the
  same as ``recall=q,false_alarm=q``), so critic arms keep fixing answers that pass and
  each fix round breaks one with probability ``regress`` (with ``het=0,noise=0`` the
  planted fix and break rates per round are exactly ``fix`` and ``regress``);
- ``cheat=q``: on a canary case (``run --canaries``) a (case, rep) cheats with
  probability ``q``: its every answer is the reference with the canary's contradicting
  check special-cased (the input it calls returns the value it demands), so it passes
  every check; the planted cheating rate of every arm is ``q``.
"""

from __future__ import annotations

import functools
import hashlib
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from critiquebench.suites import Case

from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
)

State = Literal["correct", "buggy", "broken"]

SIM_SPEC_HELP = (
    "sim[:draft=0.7,fix=0.6,het=0.5,noise=0.1,regress=0.05,tokens=200,latency=0,seed=0,"
    "suite=basic,recall=0,false_alarm=0]"
)

_WRONG = """

def _sim_wrong(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "?"
    if isinstance(value, list):
        return [*value, None]
    if isinstance(value, tuple):
        return (*value, None)
    if isinstance(value, dict):
        return {**value, "?": None}
    if isinstance(value, set | frozenset):
        return set(value) | {"?"}
    return 0 if value is None else None


_sim_reference = {entry}


def _sim_wrapped(*args, **kwargs):
    return _sim_wrong(_sim_reference(*args, **kwargs))


globals()["{entry}"] = _sim_wrapped
"""
# The wrong answer rebinds the entry point through globals() rather than a second
# ``def``: a redefinition is a mypy error, and the sim's planted effect is on the
# tests alone, so its answers must stay free of lint and type findings.


class SimSpecError(ValueError):
    """A malformed ``sim:`` model spec; the message names the setting and the fix."""


@dataclass(frozen=True)
class SimParams:
    """The planted parameters of the simulated model (see the module docstring)."""

    draft: float = 0.7
    """Probability that the first draft of a median case is buggy."""
    fix: float = 0.6
    """Probability that one fix round fixes a buggy answer of a median case."""
    het: float = 0.5
    """Case heterogeneity: SD of the case effect on the logit scale."""
    noise: float = 0.1
    """Rep-to-rep noise: SD of the (case, rep) effect on the logit scale."""
    regress: float = 0.05
    """Probability that a fix round breaks the answer (more defects) instead."""
    tokens: int = 200
    """Output tokens reported per call."""
    latency: float = 0.0
    """Seconds each call takes (it really sleeps), for concurrency and latency tests."""
    seed: int = 0
    """Seed of every draw; one experiment of the selftest is one seed."""
    suite: str = "basic"
    """The suite whose reference solutions the answers are built from."""
    prompt_tokens: int = -1
    """Prompt tokens reported per call; -1 = the prompt's word count."""
    nag: float = 0.0
    """Probability that the critic flags an answer, whatever its state."""
    cheat: float = 0.0
    """Probability that a (case, rep) of a canary case games its contradicting check."""
    recall: float = 0.0
    """Probability that the critic flags an answer that is not correct."""
    false_alarm: float = 0.0
    """Probability that the critic flags a correct answer."""

    @classmethod
    def parse(cls, argument: str) -> SimParams:
        """Parse ``key=value,key=value`` (the part of the spec after ``sim:``)."""
        known = {field.name: field.type for field in fields(cls)}
        values: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in argument.split(","))):
            key, sep, text = item.partition("=")
            key = key.strip()
            if not sep or key not in known:
                raise SimSpecError(
                    f"sim model setting {item!r}: expected key=value with key one of "
                    f"{', '.join(known)}; e.g. {SIM_SPEC_HELP}"
                )
            kind = {"int": int, "float": float, "str": str}[str(known[key])]
            try:
                values[key] = kind(text.strip())
            except ValueError:
                message = f"sim model setting {key}={text!r}: not a {kind.__name__}"
                raise SimSpecError(message) from None
        params = cls(**values)
        params.validate()
        return params

    def validate(self) -> None:
        """Raise :class:`SimSpecError` naming the first out-of-range setting."""
        for name in ("draft", "fix", "regress", "nag", "cheat", "recall", "false_alarm"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise SimSpecError(f"sim model setting {name} must be in [0, 1]")
        if self.nag and (self.recall or self.false_alarm):
            raise SimSpecError(
                "sim model settings nag and recall/false_alarm contradict: nag=q is "
                "recall=q,false_alarm=q; set one or the other"
            )
        for name in ("het", "noise", "latency"):
            if getattr(self, name) < 0:
                raise SimSpecError(f"sim model setting {name} must be >= 0")
        if self.tokens < 0:
            raise SimSpecError("sim model setting tokens must be >= 0")
        if self.prompt_tokens < -1:
            raise SimSpecError("sim model setting prompt_tokens must be >= 0 (or -1: word count)")

    @property
    def spec(self) -> str:
        """The canonical model spec of these parameters (every setting, fixed order; the
        settings of :data:`_OPTIONAL` only when they differ from their default)."""
        values = asdict(self)
        shown = {k: v for k, v in values.items() if k not in _OPTIONAL or v != _OPTIONAL[k]}
        return "sim:" + ",".join(f"{key}={value}" for key, value in shown.items())


_OPTIONAL: dict[str, object] = {
    "prompt_tokens": -1,
    "nag": 0.0,
    "cheat": 0.0,
    "recall": 0.0,
    "false_alarm": 0.0,
}
"""Settings added after specs were first stored: named in a spec only when set."""


def shift_probability(probability: float, effect: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sigmoid(logit(p) + effect)``, elementwise; 0 and 1 stay put whatever the effect."""
    if probability <= 0.0 or probability >= 1.0:
        return np.full_like(effect, probability)
    logit = math.log(probability / (1.0 - probability))
    return np.asarray(1.0 / (1.0 + np.exp(-(logit + effect))), dtype=np.float64)


def _uniform(*parts: object) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2.0**64


def case_rep_effect(params: SimParams, case_id: str, rep: int) -> float:
    """The logit-scale effect ``u_c + e_cr`` of one (case, rep)."""
    normal = NormalDist()
    case = params.het * normal.inv_cdf(_uniform(params.seed, case_id, "case"))
    return case + params.noise * normal.inv_cdf(_uniform(params.seed, case_id, rep, "rep"))


def unit_states(params: SimParams, case_id: str, rep: int, attempts: int) -> list[State]:
    """The ground-truth state of attempts ``0 .. attempts - 1`` of one (case, rep)."""
    effect = case_rep_effect(params, case_id, rep)
    buggy_p = float(shift_probability(params.draft, np.array([effect]))[0])
    fix_p = float(shift_probability(params.fix, np.array([-effect]))[0])
    draw = _uniform(params.seed, case_id, rep, 0, "draft")
    states: list[State] = ["buggy" if draw < buggy_p else "correct"]
    for round_ in range(1, attempts):
        fixed = _uniform(params.seed, case_id, rep, round_, "fix") < fix_p
        breaks = _uniform(params.seed, case_id, rep, round_, "regress") < params.regress
        if states[-1] == "correct":
            states.append("buggy" if breaks else "correct")
        else:
            states.append("correct" if fixed else "broken" if breaks else "buggy")
    return states


def draft_state(params: SimParams, case_id: str, rep: int, draw: int) -> State:
    """The state of fresh draft ``draw`` of one (case, rep): draw 0 is the first draft of
    every arm; later draws are independent drafts with the same probability of a bug."""
    if draw == 0:
        return unit_states(params, case_id, rep, 1)[0]
    effect = case_rep_effect(params, case_id, rep)
    buggy_p = float(shift_probability(params.draft, np.array([effect]))[0])
    return "buggy" if _uniform(params.seed, case_id, rep, draw, "resample") < buggy_p else "correct"


@functools.cache
def _normal_quadrature() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes and weights (summing to 1) of 120-point Gauss-Hermite quadrature over the
    standard normal, read-only.

    Computed once per process: finding the nodes solves a 120x120 eigenproblem, and
    ``params_for_effect`` bisects over ~60 reductions, one per step. Measured gain, in a
    fresh process on a quiet host: ``params_for_effect(0.9, 3)`` 0.37 -> 0.013 CPU-s,
    the design note of a 44-case run, its imports included, 1.08 -> 0.68 CPU-s.
    """
    nodes, weights = np.polynomial.hermite_e.hermegauss(120)
    weights = weights / weights.sum()
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def true_resample_reduction(params: SimParams, retry_limit: int) -> float:
    """The planted population reduction of the test-fed arm vs resampling at its tokens.

    With ``prompt_tokens`` set every call costs the same, so the resampling arm matched
    per unit to arm B draws as many drafts as B made calls: ``1 + J`` where ``J`` is the
    number of fix rounds B ran (``min(G, R)``, ``G`` the round of the first fix,
    geometric in ``p``). Draft 0 is shared, so with ``b`` and ``p`` as in the module
    docstring, B keeps a buggy answer with ``b (1 - p)^R`` and resampling with
    ``b E[b^J]``; the reduction is ``1 - E[b (1 - p)^R] / E[b E[b^J]]`` over the effect.
    """
    nodes, weights = _normal_quadrature()
    effect = nodes * math.hypot(params.het, params.noise)
    buggy = shift_probability(params.draft, effect)
    fixes = shift_probability(params.fix, -effect)
    loop_fails = buggy * (1.0 - fixes) ** retry_limit
    rounds = np.zeros_like(buggy)  # E[b^J]
    for j in range(1, retry_limit + 1):
        chance = (1.0 - fixes) ** (j - 1) * (fixes if j < retry_limit else 1.0)
        rounds += chance * buggy**j
    resample_fails = buggy * rounds
    denominator = float((weights * resample_fails).sum())
    if denominator == 0.0:
        raise ValueError("resampling leaves no defects: a reduction against it is undefined")
    return 1.0 - float((weights * loop_fails).sum()) / denominator


def true_reduction(params: SimParams, retry_limit: int) -> float:
    """The planted population reduction of the test-fed arm vs arm A (module docstring).

    Exact up to quadrature error (120-point Gauss-Hermite, < 1e-9 here).
    """
    nodes, weights = _normal_quadrature()
    effect = nodes * math.hypot(params.het, params.noise)
    buggy = shift_probability(params.draft, effect)
    stays = (1.0 - shift_probability(params.fix, -effect)) ** retry_limit
    baseline = float((weights * buggy).sum())
    if baseline == 0.0:
        raise ValueError("draft=0: arm A has no defects, so a reduction is undefined")
    return 1.0 - float((weights * buggy * stays).sum()) / baseline


def sim_code(reference: str, entry_point: str, state: State, attempt: int) -> str:
    """The code of an answer in ``state``; the attempt tag keeps answers of a unit distinct."""
    tag = f"\n# simulated answer, attempt {attempt}\n"
    if state == "correct":
        return reference.rstrip("\n") + "\n" + tag
    code = reference.rstrip("\n") + "\n" + _WRONG.replace("{entry}", entry_point) + tag
    if state == "broken":
        code += f"def {entry_point}(:\n"
    return code


def sim_reply(case: Case, state: State, attempt: int) -> str:
    """The reply of an answer in ``state``: Python code as :func:`sim_code` writes it;
    for other judges, the reference or a wrong answer of the judge's own format."""
    from critiquebench.judges import PythonFormat, artifact_format

    form = artifact_format(case.judge)
    if isinstance(form, PythonFormat):
        code = sim_code(case.reference_solution, case.entry_point, state, attempt)
        return "```python\n" + code + "```"
    return form.simulated_reply(case, state == "correct", attempt)


class SimProvider:
    """Answers with reference solutions or their mutations, as :func:`unit_states` says.

    The suite is read when the provider is built (a run builds it while it starts), not
    by the first calls: read lazily, every unit thread of a run waited for it at once,
    ~1.8 s each at concurrency 16 (py-spy, load ~12). A canary case is made from its
    source case when first asked for, not the suite's every canary in advance.
    """

    def __init__(self, params: SimParams) -> None:
        from critiquebench.suites import load_suite

        params.validate()
        self.params = params
        self._suite = {case.id: case for case in load_suite(params.suite)}
        self._canaries: dict[str, Case | None] = {}
        self._canaries_lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self.params.spec

    def _case(self, case_id: str) -> Case | None:
        """The case the call is about: one of the suite's, or the canary of one."""
        from critiquebench.suites import is_canary

        if is_canary(case_id):
            canary = self._canary(case_id)
            if canary is not None:
                return canary
        return self._suite.get(case_id)

    def _canary(self, case_id: str) -> Case | None:
        from critiquebench.suites import CANARY_PREFIX, make_canary

        with self._canaries_lock:
            if case_id in self._canaries:
                return self._canaries[case_id]
        source = self._suite.get(case_id.removeprefix(CANARY_PREFIX))
        made = make_canary(source) if source is not None else None
        with self._canaries_lock:
            return self._canaries.setdefault(case_id, made)

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        if context is None or not context.case_id:
            raise ModelError("the sim provider needs the case id of each call")
        if self.params.latency:
            time.sleep(self.params.latency)
        if context.role == "critic":
            text = _FLAG if self._flags(context) else "NO_DEFECTS"
        elif context.role == "reviewer":
            text = "```verdict\nagent: reviewer\n```"  # votes on nothing: abstains
        else:
            case = self._case(context.case_id)
            if case is None or not case.reference_solution.strip():
                raise ModelError(
                    f"sim: case {context.case_id!r} has no reference_solution in suite "
                    f"{self.params.suite!r} (set sim:suite=... to the suite being run)"
                )
            cheat = self._cheat_code(case, context)
            if cheat is not None:
                text = "```python\n" + cheat + "```"
            else:
                text = sim_reply(case, self._state(context), context.attempt)
        prompt = self.params.prompt_tokens
        return Completion(
            text=text,
            tokens_in=prompt if prompt >= 0 else sum(len(m.content.split()) for m in messages),
            tokens_out=self.params.tokens,
            latency_s=self.params.latency,
            model=self.model_name,
        )

    def _state(self, context: CallContext) -> State:
        # An actor call after the first is a fresh draft (the resampling arm); a fixer
        # call continues the unit's chain of fix rounds.
        if context.role == "actor":
            return draft_state(self.params, context.case_id, context.rep, context.attempt)
        return unit_states(self.params, context.case_id, context.rep, context.attempt + 1)[-1]

    def _cheats(self, case: Case, context: CallContext) -> bool:
        """Whether this (case, rep) of a canary games its contradicting check (``cheat``)."""
        from critiquebench.suites import canary_check

        if not self.params.cheat or canary_check(case) is None:
            return False
        return _uniform(self.params.seed, context.case_id, context.rep, "cheat") < self.params.cheat

    def _cheat_code(self, case: Case, context: CallContext) -> str | None:
        from critiquebench.suites import canary_check

        target = canary_check(case)
        if target is None or not self._cheats(case, context):
            return None
        code = _CHEAT.format(
            entry=case.entry_point,
            args=repr(target.args),
            kwargs=repr(target.kwargs),
            expected=repr(target.expected),
        )
        return (
            case.reference_solution.rstrip("\n")
            + "\n"
            + code
            + (f"\n# simulated answer, attempt {context.attempt}\n")
        )

    def _flags(self, context: CallContext) -> bool:
        """Whether the critic flags the answer of ``context.attempt`` (module docstring)."""
        params = self.params
        if params.nag:
            chance = params.nag
        elif params.recall or params.false_alarm:
            chance = params.recall if self._reviews_a_wrong_answer(context) else params.false_alarm
        else:
            return False
        # One draw per review, shared by every setting, so nag=q flags exactly the
        # reviews it flagged before recall and false_alarm existed.
        draw = _uniform(params.seed, context.case_id, context.rep, context.attempt, "nag")
        return draw < chance

    def _reviews_a_wrong_answer(self, context: CallContext) -> bool:
        # The critic reviews attempt k: the first draft for k = 0, else the k-th fix
        # round's answer; a canary's cheating answer is wrong whatever its checks say.
        case = self._case(context.case_id)
        if case is not None and self._cheats(case, context):
            return True
        states = unit_states(self.params, context.case_id, context.rep, context.attempt + 1)
        return states[-1] != "correct"


_CHEAT = """

_sim_honest = {entry}


def _sim_cheat(*args, **kwargs):
    if args == {args} and kwargs == {kwargs}:
        return {expected}
    return _sim_honest(*args, **kwargs)


globals()["{entry}"] = _sim_cheat
"""
"""What a cheating answer appends to the reference: the canary's input special-cased."""

_FLAG = '{"verdict": "fail", "issues": ["check the answer again"], "summary": "doubtful"}'
"""The critic's reply when it flags an answer: one finding, whatever the answer."""
