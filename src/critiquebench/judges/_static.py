"""Lint (ruff) and type (mypy) findings of a Python artifact, on warm tools.

The candidate is untrusted text, but neither tool executes it: ruff and mypy only
parse and analyse source, so they run outside the sandbox. What the candidate can
steer is neutralised: ruff runs ``--isolated`` with ``--ignore-noqa`` and mypy with
our own config file and no site-packages, and every comment is blanked before mypy
reads the code, so ``# type: ignore`` and ``# mypy: ignore-errors`` cannot hide a
finding. Neither tool uses the network.

Speed: ruff is a native binary that reads the code on stdin (~10 ms a process);
mypy runs as one daemon (``dmypy``) per checker, talked to over its socket from
this process, so a check costs milliseconds instead of a fresh interpreter. Its
cache lives in the project's cache folder (``mypy`` in it, by default), which later
runs reuse. Both tools are pure functions of the text (and of the settings, fixed per
checker), so a checker remembers the findings of the last texts it read: reps and arms
that produce the same artifact (a deterministic model, a replay) are read once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import tokenize
import uuid
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench._ast_turns import parse
from critiquebench.judges._calibration import (
    returning_functions,
    unproven_invariant,
    without_task_findings,
)
from critiquebench.judges._evasion import evasion_findings
from critiquebench.judges._failure import Failure
from critiquebench.project import default_cache_dir

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
is checked in full; ``judges/_calibration.py`` excuses only mismatches and missing
returns that say an invariant is unproven, and ``judges/_evasion.py`` reports code
hidden from the checks."""

MYPY_CACHE_FOLDER = "mypy"
"""mypy's cache folder inside the project's cache folder (next to the call cache)."""

CANDIDATE_FILE = "candidate.py"
"""The file name findings are reported against (the artifact is one file)."""

_MYPY_LINE = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+): (?P<severity>error|note): (?P<message>.*?)"
    r"(?:  \[(?P<code>[a-z0-9-]+)\])?$"
)


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
    """Flags of the mypy daemon."""
    cache_dir: Path | None = None
    """mypy's cache, shared by the checkers of every run in this project; None =
    ``$CRITIQUEBENCH_MYPY_CACHE`` if set, else ``mypy`` in the project's cache folder
    (``critiquebench.project.default_cache_dir``)."""
    timeout_s: float = 30.0
    """Longest a single ruff or mypy check may take before it counts as a tool failure."""
    daemon_idle_s: int = 600
    """The mypy daemon stops itself after this long without a request."""
    remembered: int = 4096
    """Findings of this many distinct texts are kept (least recently used go first);
    0 reads every text afresh."""


@dataclass(frozen=True)
class StaticReport:
    """Findings of one artifact; ``error`` when a tool could not check it."""

    findings: tuple[Failure, ...] = ()
    error: str | None = None


def blank_comments(code: str) -> str:
    """``code`` with every comment replaced by ``#`` (lines and columns kept)."""
    lines = code.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    for token in tokens:
        if token.type == tokenize.COMMENT:
            row, col = token.start
            text = lines[row - 1]
            end = col + len(token.string)
            lines[row - 1] = text[:col] + "#" + " " * (len(token.string) - 1) + text[end:]
    return "".join(lines)


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
    """ruff and mypy over artifacts, warm; thread-safe (mypy requests are serialised).

    Never raises from :meth:`check`: a tool failure is returned as ``StaticReport.error``.
    """

    def __init__(self, settings: StaticSettings | None = None) -> None:
        self.settings = settings or StaticSettings()
        self._lock = threading.Lock()
        self._folder = Path(tempfile.mkdtemp(prefix="critiquebench-static-"))
        self._status: Path | None = None
        # Keyed by digest, so a long artifact costs 32 bytes of key, not its text.
        self._remembered: OrderedDict[bytes, tuple[Failure, ...]] = OrderedDict()
        self._memory_lock = threading.Lock()  # apart from the mypy lock: a hit never waits
        self._finalizer = weakref.finalize(self, _stop_daemon, self._folder)

    def check(self, code: str, prompt: str | None = None) -> StaticReport:
        """Lint, type and evasion findings of ``code``; none when it does not parse.

        A syntax error is already one defect of the tests' ``syntax`` kind; ruff's and
        mypy's reports of the same error would count it again. With ``prompt`` (the
        task's text), findings the prompt's own text has too are the task's, not the
        answer's (``judges/_calibration.py``).
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
        key = _digest(code)
        # Only a text that parsed is ever remembered, so a remembered one need not be
        # parsed again (a parse is most of the parent's CPU of a remembered check).
        known = self._recall(key)
        if known is not None:
            return StaticReport(findings=known)
        try:
            tree = parse(code)
        except (SyntaxError, ValueError):
            return StaticReport()
        except Exception as exc:  # too deep to parse here: say so rather than guess
            return StaticReport(error=f"static checks: cannot parse: {type(exc).__name__}")
        findings: list[Failure] = []
        try:
            if self.settings.lint:
                findings.extend(self._ruff(code))
            if self.settings.types:
                typed = self._mypy(blank_comments(code))
                returning = returning_functions(tree)
                findings.extend(f for f in typed if not unproven_invariant(f, returning))
                findings.extend(evasion_findings(tree))
        except Exception as exc:  # a tool's failure, never the candidate's defect
            # Not remembered: the next reading of this text asks the tools again.
            return StaticReport(error=f"static checks: {type(exc).__name__}: {exc}")
        ordered = tuple(sorted(findings, key=_order))
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

        Safe from any thread: a check that comes meanwhile waits for this. A failure
        is left for that check to meet and report.
        """
        if not self.settings.types:
            return
        with self._lock:
            if self._status is None:
                with contextlib.suppress(Exception):
                    self._request("")

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

    def _ruff(self, code: str) -> tuple[Failure, ...]:
        ignored = self.settings.ruff_ignored
        command = [
            _ruff_binary(), "check", "--isolated", "--no-cache", "--ignore-noqa",
            "--exit-zero", "--output-format", "json", "--target-version", "py311",
            "--select", ",".join(self.settings.ruff_rules),
            *(["--ignore", ",".join(ignored)] if ignored else []),
            "--stdin-filename", CANDIDATE_FILE, "-",
        ]  # fmt: skip
        done = subprocess.run(
            command,
            input=code,
            capture_output=True,
            text=True,
            timeout=self.settings.timeout_s,
            cwd=self._folder,
            check=False,
        )
        if done.returncode != 0:
            raise StaticCheckError(f"ruff exited {done.returncode}: {done.stderr.strip()[:300]}")
        return parse_ruff(done.stdout)

    def _mypy(self, code: str) -> tuple[Failure, ...]:
        with self._lock:
            try:
                response = self._request(code)
            except StaticCheckError:
                # The daemon's incremental mode has crashed on odd input before: one
                # fresh daemon decides; a second failure is reported.
                self._stop()
                response = self._request(code)
        return parse_mypy(str(response.get("out", "")))

    def _request(self, code: str) -> dict[str, Any]:
        from mypy.dmypy.client import request

        status = self._status or self._start()
        # A fresh module name per check: the daemon drops the previous candidate
        # instead of updating it in place, and never mistakes new text for old.
        path = self._folder / "src" / f"c_{uuid.uuid4().hex}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(code, encoding="utf-8")
        try:
            response = request(
                str(status), "check", timeout=math.ceil(self.settings.timeout_s),
                files=[str(path)], export_types=False, is_tty=False, terminal_width=80,
            )  # fmt: skip
        finally:
            path.unlink()
        if "error" in response:
            raise StaticCheckError(f"mypy daemon: {str(response['error'])[-300:]}")
        if response.get("status") not in (0, 1) or "INTERNAL ERROR" in str(response.get("out")):
            detail = str(response.get("err") or response.get("out") or "")
            raise StaticCheckError(f"mypy failed: {detail[:300]}")
        # Messages that name the module name the artifact, not our temporary file.
        response["out"] = str(response.get("out", "")).replace(path.stem, "candidate")
        return response

    def _stop(self) -> None:
        if self._status is not None:
            _stop_daemon(self._folder, remove=False)
            self._status = None

    def _start(self) -> Path:
        variable = os.environ.get("CRITIQUEBENCH_MYPY_CACHE")
        chosen = self.settings.cache_dir or (
            Path(variable) if variable else default_cache_dir() / MYPY_CACHE_FOLDER
        )
        cache = chosen.resolve()
        cache.mkdir(parents=True, exist_ok=True)
        config = self._folder / "mypy.ini"
        config.write_text("[mypy]\n", encoding="utf-8")
        status = self._folder / "dmypy.json"
        command = [
            sys.executable, "-m", "mypy.dmypy", "--status-file", str(status), "start",
            "--timeout", str(self.settings.daemon_idle_s),
            "--log-file", str(self._folder / "dmypy.log"), "--",
            "--config-file", str(config), "--cache-dir", str(cache), *self.settings.mypy_flags,
        ]  # fmt: skip
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=self._folder, timeout=120, check=False
        )
        if done.returncode != 0:
            raise StaticCheckError(f"dmypy start failed: {(done.stderr or done.stdout)[:300]}")
        self._status = status
        return status


def _digest(code: str) -> bytes:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).digest()


def _order(failure: Failure) -> tuple[int, str, str]:
    return (failure.line, failure.kind, failure.code)


@functools.cache
def _ruff_binary() -> str:
    # Finding it walks sysconfig's install schemes: once per process, not per check.
    from ruff.__main__ import find_ruff_bin

    return str(find_ruff_bin())


def _stop_daemon(folder: Path, *, remove: bool = True) -> None:
    status = folder / "dmypy.json"
    if status.exists():
        try:
            from mypy.dmypy.client import request

            request(str(status), "stop", timeout=5)
        except Exception:  # the daemon is gone already; its idle timeout ends it otherwise
            pass
        status.unlink(missing_ok=True)
    if remove:
        shutil.rmtree(folder, ignore_errors=True)
