"""The HTML report of a real (replayed) run, opened in headless Chromium with no network."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from critiquebench.analysis import connect, read_report, render_html_report
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from tests.integration.png_pixels import read_rgb
from tests.integration.replay_run import build_replay_run

CHROMIUM = Path("/usr/bin/chromium")
CHARTS = 6
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


@pytest.fixture(scope="module")
def built_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tables of run "html-1" (5 cases x A, B x 2 reps), built once: see ``copied_run``."""
    output = tmp_path_factory.mktemp("html") / "runs"
    build_replay_run(output, "html-1")
    return output


@pytest.fixture()
def copied_run(built_run: Path, tmp_path: Path) -> Path:
    """This test's own copy of the built run (its 20 units take seconds to judge)."""
    output = tmp_path / "runs"
    shutil.copytree(built_run, output)
    return output


def test_report_draws_every_chart_offline(tmp_path: Path, chromium: Path, copied_run: Path) -> None:
    output = copied_run
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


def test_rendering_a_run_again_gives_the_same_bytes(copied_run: Path) -> None:
    output = copied_run
    run_dir = output / "html-1"
    names = ("report.json", "report.html", "lessons.md")
    render_html_report(output, "html-1")
    first = {name: (run_dir / name).read_bytes() for name in names}
    render_html_report(output, "html-1")  # a fresh connection over the same tables
    assert {name: (run_dir / name).read_bytes() for name in names} == first


def _sim_run(output: Path, run_id: str) -> None:
    """A small real run of the simulated model through the library path (no Prefect)."""
    config = RunConfig.model_validate(
        {"suite": "basic", "limit": 6, "reps": 2, "arms": "A,B", "output": output,
         "model": "sim:draft=0.9,fix=0.6,seed=3", "run_id": run_id}
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)


def _screenshot(chromium: Path, page: Path, profile: Path, shot: Path) -> None:
    command = [
        str(chromium), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}",
        "--virtual-time-budget=5000", "--hide-scrollbars", "--window-size=1100,2600",
        f"--screenshot={shot}", page.as_uri(),
    ]  # fmt: skip
    subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def test_a_screenshot_of_a_real_run_shows_every_chart_with_data(
    tmp_path: Path, chromium: Path
) -> None:
    output = tmp_path / "runs"
    _sim_run(output, "shot-1")
    page = render_html_report(output, "shot-1")
    shot = tmp_path / "report.png"
    _screenshot(chromium, page, tmp_path / "profile", shot)

    width, height, pixels = read_rgb(shot)
    assert (width, height) == (1100, 2600)
    colours = Counter(pixels)
    # Not blank: white is the background, not the whole page.
    assert colours[(255, 255, 255)] < 0.97 * len(pixels) and len(colours) > 100
    # Each chart's own colours are drawn: the defect bars, arm B's orange (curve, gain,
    # tokens), and the halt reasons of both arms (single_draft grey, visible_clean green).
    for name, rgb in (("defect bars", (76, 120, 168)), ("arm B", (245, 133, 24)),
                      ("single_draft", (158, 158, 158)),
                      ("visible_clean", (42, 157, 63))):  # fmt: skip
        assert colours[rgb] > 500, f"{name} {rgb} is not on the screenshot"

    # And in the DOM, after the scripts ran: every chart drew its data, one mark per value.
    dom = _dump_dom(chromium, page, tmp_path / "profile-dom")
    parts = [part.split("</figure>")[0] for part in re.split(r'id="chart-\d+"', dom)[1:]]
    drawn = [
        (len(re.findall(r'aria-roledescription="bar"', svg)),
         len(re.findall(r'aria-roledescription="point"', svg)))
        for svg in parts
    ]  # fmt: skip
    report = read_report(output, "shot-1")
    rounds = len(report.curves["B"].kept.mean_defects)  # 4: B's units ran up to 3 fix rounds
    assert drawn == [
        (2, 0),  # defects: a bar per arm
        (0, 2),  # tokens vs defects: a point per arm
        (rounds - 1, 2 * (1 + rounds)),  # gain bars of B's fix rounds; kept+latest points
        (0, 1 + rounds),  # pass rate vs tokens: a point per round and arm
        (3, 0),  # halts: A single_draft, B visible_clean, B retry_limit
        (0, 2 * (1 + rounds)),  # cost-matched curves: a point per round and arm, twice
    ]
    # The free model's cost chart plots tokens; B's gain panel is drawn.
    assert "Tokens vs defects (cost is $0)" in dom and "Gain per round" in dom
    # A Python run's defects by group, kept: tests, lint and types (they add up).
    assert report.defect_groups == ("tests", "lint", "types")
    assert "<th>tests/lint/types kept</th>" in dom and "Trigger decisions" not in dom


# Clicks a user makes, run in the page once it has loaded: tick "changed between arms",
# then click the first row left.
_CLICKS = """<script>window.addEventListener("load", function () {
document.getElementById("units-flipped").click();
document.querySelector("#units-body tr").click();
});</script></body>"""
_ROW = re.compile(
    r'<tr tabindex="0" class="unit( flipped)?" data-group="\d+" data-arm="[^"]*">(.*?)</tr>'
)


def _cells(row: str) -> list[str]:
    return [html.unescape(cell) for cell in re.findall(r"<td>(.*?)</td>", row, re.S)]


def _arm_cells(story: str, arm: str) -> list[str]:
    """The story's cells of ``arm``, round by round (the halt last), as text."""
    found = re.findall(rf'<td data-arm="{arm}"[^>]*>(.*?)</td>', story, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "\n", cell)) for cell in found]


def test_two_clicks_lead_from_the_flipped_cases_to_a_units_prompts_and_checks(
    tmp_path: Path, chromium: Path, copied_run: Path
) -> None:
    output = copied_run
    page = render_html_report(output, "html-1")
    # The page's clicks are run in a copy beside it, so it loads the same story files.
    clicked = page.with_name("clicked.html")
    clicked.write_text(page.read_text(encoding="utf-8").replace("</body>", _CLICKS), "utf-8")
    dom = _dump_dom(chromium, clicked, tmp_path / "profile")

    db = connect(output, ["html-1"])
    passes = db.execute(
        "SELECT case_id, rep, arm, passed FROM cases ORDER BY case_id, rep, arm"
    ).fetchall()
    by_pair: dict[tuple[str, int], set[bool]] = {}
    for case_id, rep, _, passed in passes:
        by_pair.setdefault((case_id, rep), set()).add(passed)
    flipped = [(c, str(r), a) for c, r, a, _ in passes if len(by_pair[(c, r)]) == 2]
    # Replay patterns 2 and 3 fail in A and are fixed in B, at both reps: 8 units.
    assert len(flipped) == 8

    # The first click left exactly the flipped units in the table, A's and B's.
    body = dom.split('id="units-body"')[1].split("</tbody>")[0]
    rows = _ROW.findall(body)
    assert [(c[0], c[2], c[1]) for _, row in rows for c in [_cells(row)]] == flipped
    assert all(mark for mark, _ in rows)
    assert "8 of 20 unit(s) shown" in dom

    # The second click opened the first row's story: A and B of its case and rep.
    case_id, rep, arm = flipped[0]
    story = dom.split('id="story"')[1].split("</table>")[0]
    assert html.escape(f"{case_id}  rep {rep}", quote=False) in story
    assert f'<th data-arm="{arm}" class="picked">' in story  # the arm of the row clicked
    talk = db.execute(
        "SELECT arm, iteration, role, messages, reply FROM transcripts "
        "WHERE case_id = ? AND rep = ? AND kind = 'call' ORDER BY arm, entry",
        [case_id, int(rep)],
    ).fetchall()
    judged = db.execute(
        "SELECT arm, iteration, checks_passed, checks_total, failures FROM attempts "
        "WHERE case_id = ? AND rep = ? ORDER BY arm, iteration",
        [case_id, int(rep)],
    ).fetchall()
    cells = {name: _arm_cells(story, name) for name in ("A", "B")}
    assert len(cells["B"]) > 2  # B's draft and at least one fix round, then the halt
    for name, iteration, role, messages, reply in talk:
        shown = cells[name][iteration]
        asked = json.loads(messages)[-1]["content"]
        # The prompt's last lines (where the request and the feedback are) and the reply.
        assert asked.splitlines()[-1] in shown, (name, iteration, role)
        assert f"asked ({role}" in shown and f"answer ({role}" in shown
        assert reply.strip().splitlines()[1] in shown
    for name, iteration, passed, total, failures in judged:
        shown = cells[name][iteration]
        assert f"checks: {passed}/{total} passed" in shown
        for failure in json.loads(failures):
            assert failure["source"] in shown
    assert "halt: single_draft; not passed" in cells["A"][-1]
    assert "halt: visible_clean; passed" in cells["B"][-1]
