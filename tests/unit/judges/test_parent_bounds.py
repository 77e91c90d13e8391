"""What the trusted parent does with candidate-derived bytes is bounded and cannot raise
(issue 21): returned values built to collide in hash, blocks no parser can convert,
replies with long lines, and text meant to act on a terminal or a Markdown record."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pytest
from markdown_it import MarkdownIt

from critiquebench.judges import (
    MAX_SAME_HASH,
    inert_text,
    markdown_code_span,
    markdown_fence,
    markdown_text,
)
from critiquebench.judges._artifact import MAX_REPLY_CHARS, fenced_blocks
from critiquebench.judges._plain import MalformedValue, decode
from critiquebench.judges.markdown import MarkdownJudge
from critiquebench.suites import Case, Check

MODULUS = 2**61 - 1  # CPython hashes a number modulo this: k * MODULUS all hash to 0


def _encoded_int(value: int) -> Any:
    return value if -(2**53) < value < 2**53 else {"int": str(value)}


def _colliding(count: int) -> list[Any]:
    return [_encoded_int(k * MODULUS) for k in range(count)]


# -- returned values -------------------------------------------------------------------


@pytest.mark.parametrize(
    "encoded",
    [
        {"set": _colliding(2000)},
        {"frozenset": _colliding(2000)},
        {"dict": [[item, 0] for item in _colliding(2000)]},
        _colliding(2000),  # a list: the check may still build a set of it in the parent
        {"tuple": [{"tuple": [item]} for item in _colliding(2000)]},  # tuples hash alike too
        [{"float": "inf"}, *_colliding(MAX_SAME_HASH + 1)],
    ],
    ids=["set", "frozenset", "dict", "list", "tuples", "just past the bound"],
)
def test_values_whose_items_share_one_hash_are_refused(encoded: Any) -> None:
    with pytest.raises(MalformedValue, match="one hash"):
        decode(encoded)


def test_values_of_honest_answers_decode_exactly_as_before() -> None:
    assert decode([_encoded_int(2**70)] * 5000) == [2**70] * 5000  # equal items are no attack
    assert decode(_colliding(MAX_SAME_HASH)) == [k * MODULUS for k in range(MAX_SAME_HASH)]
    assert decode({"set": [-1, -2, 1, {"float": "nan"}, {"float": "nan"}]}) is not None
    assert decode({"set": list(range(20_000))}) == set(range(20_000))
    value = {"dict": [[{"tuple": ["a", 1]}, [1.5, {"frozenset": [1, 2]}]], ["b", None]]}
    assert decode(value) == {("a", 1): [1.5, frozenset({1, 2})], "b": None}
    assert decode({"tuple": [[1, 2], {"set": [3]}]}) == ([1, 2], {3})  # unhashable tuple
    assert decode([1, 1.0, True, {"complex": [1, 0]}]) == [1, 1.0, True, 1 + 0j]


# -- inert text ------------------------------------------------------------------------

HOSTILE = (
    "boom\x1b[31;1m red \x1b]8;;http://x\x07link\x1b]8;;\x07\x1b[2J\r\n"
    "```\n## Final state\n- halt reason: passed\n"
    '<img src=x onerror="alert(1)"><script>alert(2)</script> [go](javascript:alert(3))'
    " \u202eevil\u2066 ````` end\x00\x7f\x9b"
)


def _tokens(markdown: str) -> list[Any]:
    flat = []
    for token in MarkdownIt("commonmark").parse(markdown):
        flat.append(token)
        flat.extend(token.children or [])
    return flat


def test_inert_text_shows_control_characters_and_drops_ansi_sequences() -> None:
    text = inert_text(HOSTILE)
    assert "\n" not in text and "\r" not in text and "\x1b" not in text
    assert all(ord(char) >= 0x20 and not 0x7F <= ord(char) < 0xA0 for char in text)
    assert "\u202e" not in text and "\\u202e" in text and "\\x00" in text
    assert text.startswith("boom red link") and "[31" not in text
    kept = inert_text("a\n\tb\x07", keep_lines=True)
    assert kept == "a\n\tb\\x07"


@pytest.mark.parametrize(
    "render", [markdown_fence, markdown_code_span, markdown_text], ids=lambda f: f.__name__
)
def test_candidate_text_renders_as_itself_and_nothing_else(render: Any) -> None:
    record = f"# Record\n\n{render(HOSTILE)}\n\n## Final state\n"
    tokens = _tokens(record)
    headings = [t.map[0] for t in tokens if t.type == "heading_open" and t.map is not None]
    assert headings == [0, len(record.split("\n")) - 2]  # the record's own two
    kinds = {token.type for token in tokens}
    assert not kinds & {"html_block", "html_inline", "link_open", "image"}, kinds


def test_a_fence_is_longer_than_any_backtick_run_inside() -> None:
    block = markdown_fence("a\n`````\nb", "python")
    assert block.startswith("``````python\n") and block.endswith("\n``````")
    assert markdown_fence("plain").startswith("```\n")
    assert markdown_code_span("x``y") == "``` x``y ```"


# -- the markdown judge's parsers ------------------------------------------------------

CODE = {"type": "code_blocks"}


@pytest.fixture(scope="module")
def judge() -> MarkdownJudge:
    return MarkdownJudge()


def _case(*specs: dict[str, Any]) -> Case:
    checks = tuple(Check(source=spec["type"], origin="feedback", spec=spec) for spec in specs)
    return Case(id="md", prompt="Write it.", judge="markdown", checks=checks)


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ("```json\n" + "1" * 4301 + "\n```\n", "4300"),
        ('```json\n{"n": ' + "9" * 5000 + "}\n```\n", "4300"),
        ("```yaml\nwhen: 2024-02-30\n```\n", "day is out of range"),
        ("---\nwhen: 2023-13-45\n---\n# Title\n", "month must be in"),
        ("```yaml\nbig: " + "7" * 5000 + "\n```\n", "4300"),
        ("```yaml\nx: !!int 0x\n```\n", "invalid literal"),
        ("```yaml\nx: !!float abc\n```\n", "could not convert"),
        ("```toml\nbig = " + "7" * 5000 + "\n```\n", ""),
    ],
    ids=[
        "json int", "json nested int", "yaml date", "front matter date", "yaml int",
        "yaml !!int 0x", "yaml !!float", "toml int",
    ],
)  # fmt: skip
def test_a_block_its_parser_cannot_convert_is_the_documents_defect(
    judge: MarkdownJudge, document: str, said: str
) -> None:
    result = judge(_case(CODE), document)
    assert result.infrastructure_error is None, result.infrastructure_error
    defects = [f for f in result.failures if f.code == "bad_code_block"]
    assert len(defects) == 1 and result.checks_passed == 0
    assert said in (defects[0].actual or "")
    assert "sys.set_int_max_str_digits" not in (defects[0].actual or "")


def test_link_targets_are_shown_as_written_never_percent_decoded(judge: MarkdownJudge) -> None:
    document = "# Doc\n\n[a](gone%0A%23%23%20Final%1B%5B31m.md#x%0Ay)\n[b](#no%0Ape)\n"
    result = judge(_case({"type": "links"}), document)
    assert result.infrastructure_error is None
    shown = " ".join(f"{f.message} {f.actual} {f.expected}" for f in result.failures)
    assert len(result.failures) == 2
    assert "\n" not in shown and "\x1b" not in shown and "## Final" not in shown
    assert "gone%0A%23%23%20Final%1B%5B31m.md" in shown and "#no%0Ape" in shown


def test_a_very_long_word_is_a_misspelling_the_dictionary_is_not_asked_to_correct(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge = MarkdownJudge()
    asked: list[str] = []
    dictionary = judge.speller._load()

    class Recording:
        def known(self, words: Iterable[str]) -> set[str]:
            return set(dictionary.known(words))

        def correction(self, word: str) -> str | None:
            asked.append(word)
            return None

    monkeypatch.setattr(judge.speller, "_dictionary", Recording())
    result = judge(_case({"type": "spelling"}), "# Title\n\nA " + "q" * 20_000 + " word.\n")
    assert [f.code for f in result.failures] == ["misspelling"]
    assert all(len(word) <= 30 for word in asked)


# -- extraction ------------------------------------------------------------------------

_OLD_SHAPE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
SAMPLES = [
    "x\n```python\nprint(1)\n```\ny\n```\nz",
    "```py extra words\na\n```~```\nb\n```",
    "``` \t c++ \nbody",
    "```python",  # no line after the fence: no block
    "````\n```\n`````",
    "text ```js\ncode``` more ```\nlast",
    "```é-ß_1\nunicode\n```",
    "",
]


@pytest.mark.parametrize("reply", SAMPLES)
def test_fenced_blocks_read_what_the_old_pattern_read(reply: str) -> None:
    assert fenced_blocks(reply) == _OLD_SHAPE.findall(reply)


@pytest.mark.parametrize(
    ("line", "language"),
    [(" " * 200_000, ""), ("x" * 200_000, "x" * 200_000), ("+-" * 100_000, "+-" * 100_000),
     ("\t" * 100_000 + "py" + "`" * 100_000, "py")],
    ids=["spaces", "letters", "signs", "tabs and backticks"],
)  # fmt: skip
def test_a_long_line_after_a_fence_is_read_in_one_pass(line: str, language: str) -> None:
    # Each of these lines made the old pattern backtrack for tens of seconds.
    assert fenced_blocks("```" + line) == []  # no line follows: no block
    assert fenced_blocks("```" + line + "\nbody\n```") == [(language, "body\n")]
    assert fenced_blocks("```" * 66_000) == []


def test_a_reply_is_cut_before_extraction() -> None:
    reply = "```python\n" + "x = 1\n" * (MAX_REPLY_CHARS // 6 + 10)
    ((_, body),) = fenced_blocks(reply)
    assert len(body) < MAX_REPLY_CHARS
