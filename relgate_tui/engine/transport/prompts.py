"""How a task item becomes chat messages. Deterministic: the demo endpoint recognises items by this exact text."""

from __future__ import annotations

from relgate_tui.engine.records import TaskItem

LETTERS = "ABCDEFGHIJ"
NUMERIC_INSTRUCTION = "Give the final answer as a number."
MCQ_INSTRUCTION = "Answer with the letter of the correct option."


def item_messages(item: TaskItem, system: str | None = None) -> list[dict]:
    """Chat messages for ``item``: its own ``messages`` if it has them, else one user message built from the
    question (multiple choice: the question, the options as ``A. …`` lines, and an instruction to answer with the
    letter). ``system`` is prepended unless the item already starts with a system message."""
    if item.messages:
        messages = [dict(m) for m in item.messages]
    else:
        messages = [{"role": "user", "content": user_content(item)}]
    if system and messages[0].get("role") != "system":
        messages.insert(0, {"role": "system", "content": system})
    return messages


def user_content(item: TaskItem) -> str:
    if item.choices:
        options = "\n".join(f"{LETTERS[i]}. {choice}" for i, choice in enumerate(item.choices))
        return f"{item.question}\n\n{options}\n\n{MCQ_INSTRUCTION}"
    return item.question
