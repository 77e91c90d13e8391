"""One judge per test module: its warm workers are shared, as in a real run."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from critiquebench.judges import JudgeResult, PythonJudge, SandboxLimits
from tests.helpers import make_case

LIMITS = SandboxLimits(wall_s=8.0, check_timeout_s=2.0)


@pytest.fixture(scope="module")
def judge() -> Iterator[PythonJudge]:
    """A judge with the strongest sandbox this machine offers (bubblewrap where installed)."""
    instance = PythonJudge(LIMITS)
    try:
        if shutil.which("bwrap"):
            # Where bubblewrap is installed (make installs it), the tests prove its fences;
            # a silent fallback would make every containment test below meaningless.
            assert instance.sandbox.mode.bubblewrap, instance.describe()
        yield instance
    finally:
        instance.close()


def run(judge: PythonJudge, code: str) -> JudgeResult:
    """Judge ``code`` as an answer to the add case (3 checks: 1 feedback, 2 held out)."""
    return judge(make_case(), code)


def kinds(result: JudgeResult) -> list[str]:
    """The failure kinds, in order."""
    return [failure.kind for failure in result.failures]
