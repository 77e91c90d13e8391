"""Model specs for the HTTP providers."""

from __future__ import annotations

import pytest

from critiquebench.models import (
    GeminiProvider,
    ModelError,
    OpenAICompatibleProvider,
    UnknownModelError,
    provider_from_spec,
)


@pytest.fixture
def gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")


@pytest.mark.usefixtures("gemini_key")
@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("gemini", "gemini:gemini-2.5-flash"),
        ("gemini:gemini-2.5-pro", "gemini:gemini-2.5-pro"),
        ("gemini:gemini-2.5-pro@http://127.0.0.1:9", "gemini:gemini-2.5-pro"),
    ],
)
def test_gemini_specs(spec: str, name: str) -> None:
    provider = provider_from_spec(spec)
    assert isinstance(provider, GeminiProvider) and provider.model_name == name


def test_gemini_spec_without_key_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ModelError, match="GEMINI_API_KEY"):
        provider_from_spec("gemini")


def test_openai_spec_keeps_colons_in_the_model_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = provider_from_spec("openai:qwen2.5-coder:7b@http://localhost:11434")
    assert isinstance(provider, OpenAICompatibleProvider)
    assert provider.model_name == "openai:qwen2.5-coder:7b"
    provider.close()


@pytest.mark.parametrize("spec", ["openai:llama3", "openai:@http://localhost:8000", "openai"])
def test_openai_spec_needs_model_and_url(spec: str) -> None:
    with pytest.raises(UnknownModelError, match="openai:MODEL@BASE_URL"):
        provider_from_spec(spec)
