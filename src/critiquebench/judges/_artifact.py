"""What kind of artifact a judge reads, and how the loop asks for it and reads it back.

The loop, the critics and the simulated model are the same for every judge; only
the words change: what the actor is told to write (``system``), the fence its
answer comes in (``fence``), what the answer is called (``noun``), and how the
artifact is pulled out of a free-form reply (``extract``). A judge declares its
format as the class attribute ``artifact_format``; judges that declare none read
Python code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from critiquebench.judges._case import Case

MAX_REPLY_CHARS = 400_000
"""Only this much of a reply is read. A longer reply is cut before any parsing, so a
runaway or hostile reply costs no more than a long honest one; the cut answer is then
judged as it stands (every judge's own size limit is below this, so for them it is a
``too_large`` defect)."""

INVISIBLE_PREFIX = "\ufeff\u200b\u200c\u200d\u2060\u180e"
"""Characters that may lead an answer without being part of it: a byte-order mark and
zero-width spaces or joiners (editors and tokenizers add them); extraction drops them."""


def strip_invisible(text: str) -> str:
    """``text`` without its leading byte-order mark or zero-width characters."""
    return text.lstrip(INVISIBLE_PREFIX)


def fenced_blocks(reply: str) -> list[tuple[str, str]]:
    """The reply's fenced blocks as (language, body), in order; an unclosed last block
    runs to the end of the reply.

    An opening fence is three backticks, optional spaces or tabs, a language of word
    characters, ``+`` and ``-``, then anything up to the end of its line; the body runs
    to the next three backticks. The scan only moves forward (``str.find``), so its work
    is linear in the reply however the fences are arranged: no regular expression here
    can backtrack over a long line.
    """
    text = strip_invisible(reply[:MAX_REPLY_CHARS])
    found: list[tuple[str, str]] = []
    position = 0
    while True:
        opening = text.find("```", position)
        if opening < 0:
            return found
        newline = text.find("\n", opening + 3)
        if newline < 0:  # an opening fence needs its own line: none can follow
            return found
        info = text[opening + 3 : newline].lstrip(" \t")
        end = 0
        while end < len(info) and (info[end].isalnum() or info[end] in "_+-"):
            end += 1
        closing = text.find("```", newline + 1)
        if closing < 0:
            found.append((info[:end], text[newline + 1 :]))
            return found
        found.append((info[:end], text[newline + 1 : closing]))
        position = closing + 3


@dataclass(frozen=True)
class ArtifactFormat:
    """One kind of artifact: a fenced block of one language, e.g. SQL or JSON.

    Subclasses override :meth:`extract` (and :meth:`simulated_reply`) where a plain
    fenced block is not what the judge reads.
    """

    fence: str
    """The fence info string the actor is asked to use, e.g. ``sql``."""
    noun: str
    """What the answer is, for prompts: "query", "JSON document", "decision"."""
    system: str
    """The actor's system prompt."""
    aliases: tuple[str, ...] = ()
    """Further info strings accepted in replies (besides ``fence`` and none)."""
    review: str = ""
    """What a critic is told it reviews and what to look for (the start of its system
    prompt); empty = the review of an answer to a programming task."""

    def blocks(self, reply: str) -> list[str]:
        """The bodies of the reply's fenced blocks in this format's language (or none)."""
        accepted = {"", self.fence, *self.aliases}
        return [body for language, body in fenced_blocks(reply) if language in accepted]

    def extract(self, case: Case, reply: str) -> str:
        """The artifact in a reply: the first fenced block, else the whole reply."""
        blocks = self.blocks(reply)
        chosen = blocks[0] if blocks else reply[:MAX_REPLY_CHARS]
        return strip_invisible(strip_invisible(chosen).strip("\n")) + "\n"

    def fenced(self, artifact: str) -> str:
        """``artifact`` in a fenced block of this format, as prompts show it."""
        return f"```{self.fence}\n{artifact.strip(chr(10))}\n```"

    def fix_request(self) -> str:
        """The fix prompt's last line: how to reply with the corrected answer."""
        return f"Reply with the complete corrected {self.noun} in one ```{self.fence} code block."

    def simulated_reply(self, case: Case, correct: bool, attempt: int) -> str:
        """The simulated model's reply: the case's reference when ``correct``, else a
        wrong answer. The default breaks the reference by cutting its second half;
        formats override this with a wrong answer of their own kind."""
        reference = case.reference_solution.strip("\n")
        if correct:
            return self.fenced(reference)
        return self.fenced(reference[: max(1, len(reference) // 2)])


@dataclass(frozen=True)
class PythonFormat(ArtifactFormat):
    """Python code defining the case's entry point (the Python judge's artifact)."""

    def extract(self, case: Case, reply: str) -> str:
        """The block that defines the entry point, else the first block, else the reply.

        For completion-style prompts (HumanEval), a reply that only holds the body is
        appended to the prompt, as the dataset intends.
        """
        blocks = self.blocks(reply)
        definition = f"def {case.entry_point}"
        chosen = next((block for block in blocks if definition in block), None)
        if chosen is None:
            chosen = blocks[0] if blocks else reply[:MAX_REPLY_CHARS]
        code = strip_invisible(strip_invisible(chosen).strip("\n")) + "\n"
        if case.prompt_is_code and definition not in code:
            code = case.prompt + code
        return code


PYTHON_FORMAT = PythonFormat(
    fence="python",
    aliases=("py",),
    noun="function",
    system=(
        "You are a careful Python programmer. Reply with one ```python code block that "
        "contains the complete function, and nothing else."
    ),
)
"""The format of judges that declare none."""
