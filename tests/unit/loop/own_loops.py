"""Users' own loops, as a user would write them in their own package (see README,
"Bring your own loop"); ``tests.unit.loop.own_loops:NAME`` names each as an arm."""

from __future__ import annotations

from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from critiquebench.models import GenerationParams, Message, ModelProvider
from critiquebench.suites import Case


class Drafts(TypedDict):
    task: str
    drafts: list[str]


def _ask(config: RunnableConfig, prompt: str) -> str:
    provider: ModelProvider = config["configurable"]["provider"]
    return provider.complete([Message("user", prompt)], GenerationParams(max_tokens=256)).text


def _draft(state: Drafts, config: RunnableConfig) -> dict[str, Any]:
    return {"drafts": [_ask(config, state["task"])]}


def _recheck(state: Drafts, config: RunnableConfig) -> dict[str, Any]:
    prompt = f"{state['task']}\n\nYour answer:\n{state['drafts'][-1]}\n\nFix any bug."
    return {"drafts": [*state["drafts"], _ask(config, prompt)]}


def _build() -> Any:
    graph = StateGraph(Drafts)
    graph.add_node("draft", _draft)
    graph.add_node("recheck", _recheck)
    graph.add_edge(START, "draft")
    graph.add_edge("draft", "recheck")
    graph.add_edge("recheck", END)
    return graph.compile()


GRAPH = _build()


def draft_and_recheck(case: Case, provider: ModelProvider) -> list[str]:
    """Draft, then re-check once (a compiled LangGraph graph)."""
    final = GRAPH.invoke(
        {"task": case.prompt, "drafts": []}, {"configurable": {"provider": provider}}
    )
    return list(final["drafts"])


def returns_a_number(case: Case, provider: ModelProvider) -> Any:
    """Forgets to return the attempts."""
    provider.complete([Message("user", case.prompt)], GenerationParams())
    return 3


def raises(case: Case, provider: ModelProvider) -> list[str]:
    """A loop with a bug of its own."""
    raise KeyError("drafts")


def returns_text(case: Case, provider: ModelProvider) -> str:
    """Annotated to return one string instead of a list of attempts."""
    return "def f(): pass"


def takes_the_case_only(case: Case) -> list[str]:
    """Cannot receive the provider."""
    return []


NOT_CALLABLE = 42


def answers_from_what_it_sees(case: Case, provider: ModelProvider) -> list[str]:
    """A loop that tries to answer from the case itself: the reference solution, or
    failing that a note of the checks it was shown (a loop cannot see held-out ones)."""
    if case.reference_solution:
        return [case.reference_solution]
    shown = ",".join(check.origin for check in case.checks)
    return [f"def {case.entry_point}(*args):\n    return {shown!r}\n"]
