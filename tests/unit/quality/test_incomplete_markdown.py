"""The data-quality summary of an incomplete run: its verdict is withheld, per arm."""

from __future__ import annotations

from critiquebench.quality import QualityReport


def _unit(case_id: str, arm: str, error: str) -> dict[str, object]:
    return {"case_id": case_id, "arm": arm, "rep": 0, "error": error}


def test_units_not_measured_make_the_checks_verdict_inconclusive() -> None:
    errors = (
        _unit("c1", "B", "infrastructure: judge: ```\n## Final state: MET\x1b[2J"),
        _unit("c2", "B", "provider: quota"),
        _unit("c1", "A", "provider: quota"),
    )
    report = QualityReport("r", passed=True, unfinished=errors, missing=2)
    text = report.markdown()
    assert report.not_measured == 5 and not report.complete
    assert "**Verdict: inconclusive: 5 units not measured.**" in text
    assert "- arm ` A `: 1 unit(s) with an infrastructure error" in text
    assert "- arm ` B `: 2 unit(s) with an infrastructure error" in text
    assert "- 2 planned unit(s) without rows" in text
    # The candidate's text stays inside its code span, on its unit's line.
    assert "  - ` c1 ` rep 0: ```` infrastructure: judge: ```\\n## Final state: MET ````" in text
    assert "\n## Final state" not in text and "\x1b" not in text


def test_a_complete_run_has_no_withheld_verdict() -> None:
    report = QualityReport("r", passed=True, unfinished=(), missing=0)
    assert report.markdown() == "## Data quality of run `r`: passed\n\nAll 0 expectations met ().\n"
