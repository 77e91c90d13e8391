"""The chart library's bundle is made once per installed version and kept in the call
cache's folder: a later report reads the same bytes instead of bundling again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import vl_convert

from critiquebench.analysis.render import _charts
from critiquebench.runtime.project import CHART_BUNDLE_VARIABLE


@pytest.fixture
def fresh_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty call-cache folder under ``tmp_path``, and no bundle held by this process."""
    monkeypatch.setenv("CRITIQUEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(CHART_BUNDLE_VARIABLE, raising=False)  # the session's
    _charts.vega_bundle.cache_clear()
    yield tmp_path / "cache"
    _charts.vega_bundle.cache_clear()


def test_the_bundle_is_kept_and_read_back_unchanged(
    fresh_bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _charts.vega_bundle()
    kept = _charts.bundle_path()
    assert kept.parent == fresh_bundle
    assert kept.read_text(encoding="utf-8") == made
    assert "vegaEmbed" in made and "</script" not in made
    assert [p.name for p in kept.parent.iterdir()] == [kept.name]  # no temporary left

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("bundled again although the cache holds the bundle")

    monkeypatch.setattr(vl_convert, "javascript_bundle", refuse)
    _charts.vega_bundle.cache_clear()
    assert _charts.vega_bundle() == made


def test_a_cache_that_cannot_be_written_still_gives_the_bundle(
    fresh_bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh_bundle.write_text("a file where the cache folder would go", encoding="utf-8")
    calls: list[str] = []

    def bundle(*args: object, **kwargs: object) -> str:
        calls.append("bundled")
        return "window.vegaEmbed = 1; '</script>'"

    monkeypatch.setattr(vl_convert, "javascript_bundle", bundle)
    assert _charts.vega_bundle() == "window.vegaEmbed = 1; '<\\/script>'"
    _charts.vega_bundle.cache_clear()
    assert _charts.vega_bundle() == "window.vegaEmbed = 1; '<\\/script>'"
    assert calls == ["bundled", "bundled"]


def test_a_folder_named_for_the_bundle_is_used_instead_of_the_cache(
    fresh_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHART_BUNDLE_VARIABLE, str(tmp_path / "charts"))
    monkeypatch.setattr(vl_convert, "javascript_bundle", lambda *args, **kwargs: "window.x = 1;")
    assert _charts.vega_bundle() == "window.x = 1;"
    assert _charts.bundle_path().parent == tmp_path / "charts"
    assert _charts.bundle_path().read_text(encoding="utf-8") == "window.x = 1;"
    assert not fresh_bundle.exists()
