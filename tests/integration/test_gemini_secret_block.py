"""The Gemini key can come from a Prefect Secret block instead of the environment."""

from __future__ import annotations

import pytest

from critiquebench.models import ModelError
from critiquebench.models._gemini import SECRET_BLOCK_VARIABLE, gemini_api_key

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_key_is_read_from_a_named_secret_block(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.blocks.system import Secret

    Secret(value="block-key-123").save("gemini-key-test", overwrite=True)
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(SECRET_BLOCK_VARIABLE, "gemini-key-test")
    assert gemini_api_key() == "block-key-123"


def test_environment_key_wins_and_a_missing_block_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "env-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    assert gemini_api_key() == "env-key"
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv(SECRET_BLOCK_VARIABLE, "no-such-block")
    with pytest.raises(ModelError, match="no-such-block"):
        gemini_api_key()
