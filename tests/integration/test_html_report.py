"""The HTML report of a real (replayed) run, opened in headless Chromium with no network."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from critiquebench.analysis import read_report, render_html_report
from tests.integration.replay_run import build_replay_run

CHROMIUM = Path("/usr/bin/chromium")
CHARTS = 5
# Any reference a browser would fetch by itself: a script, stylesheet, image or frame.
REMOTE = re.compile(
    r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?https?:""", re.I
)


@pytest.fixture(scope="module")
def chromium() -> Path:
    """Debian's Chromium, installed with apt-get when missing (the tests need root then)."""
    if CHROMIUM.exists():
        return CHROMIUM
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        pytest.skip("Chromium is not installed and apt-get (as root) is not available")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (["update", "-q"], ["install", "-y", "-q", "chromium"]):
        done = subprocess.run(
            [apt, *args], capture_output=True, text=True, timeout=900, env=env, check=False
        )
        if done.returncode != 0:
            pytest.skip(f"apt-get {args[0]} failed: {done.stderr.strip()[-400:]}")
    return CHROMIUM


def _dump_dom(chromium: Path, page: Path, profile: Path) -> str:
    """The page's DOM after its scripts ran, in a browser that cannot resolve any host."""
    command = [
        str(chromium),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        # Every host name fails to resolve: a chart that needed a CDN would not draw.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def test_report_draws_every_chart_offline(tmp_path: Path, chromium: Path) -> None:
    output = tmp_path / "runs"
    build_replay_run(output, "html-1")
    page = render_html_report(output, "html-1")
    assert page == output / "html-1" / "report.html"
    text = page.read_text(encoding="utf-8")
    assert not REMOTE.search(text), REMOTE.search(text)
    assert "Inconclusive: arm B reduces defects by 53%" in text
    # The page's numbers are those of report.json, written beside it.
    assert read_report(output, "html-1").arms[1].reduction_vs_a == pytest.approx(10 / 19)

    dom = _dump_dom(chromium, page, tmp_path / "profile")
    # Split the DOM at each chart's container: every one must hold a drawn Vega SVG.
    parts = re.split(r'id="chart-\d+"', dom)[1:]
    assert len(parts) == CHARTS
    for index, part in enumerate(parts):
        svg = part.split("</figure>")[0]
        assert "<svg" in svg and 'class="marks"' in svg, f"chart {index} did not render"
        assert re.search(r'class="mark-(rect|symbol|line)', svg), f"chart {index} has no marks"
    assert dom.count('class="marks"') == CHARTS


def test_escalated_units_link_to_their_records(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    build_replay_run(output, "html-2", reps=1)
    text = render_html_report(output, "html-2").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]+)"', text)
    # Replay patterns 3 and 4 escalate in arm B: cases 004 and 005.
    assert len(links) == 2
    for link in links:
        assert link.startswith("escalations/") and link.endswith("__B__r0.md")
        assert (output / "html-2" / link).is_file()


def test_a_run_without_the_baseline_gets_no_verdict(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    build_replay_run(output, "html-3", limit=2, reps=1, arms="B")
    text = render_html_report(output, "html-3").read_text(encoding="utf-8")
    assert "No verdict: the run needs arm A" in text


def test_unknown_run_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no results for run 'nope'"):
        render_html_report(tmp_path, "nope")


def test_rendering_a_run_again_gives_the_same_bytes(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    build_replay_run(output, "html-4")
    run_dir = output / "html-4"
    names = ("report.json", "report.html", "lessons.md")
    render_html_report(output, "html-4")
    first = {name: (run_dir / name).read_bytes() for name in names}
    render_html_report(output, "html-4")  # a fresh connection over the same tables
    assert {name: (run_dir / name).read_bytes() for name in names} == first
