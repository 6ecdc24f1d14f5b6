"""How the simulator recognises what it is asked: bundled task items by user-message content, and candidate texts
of the bundled judge-audit sets (with their human mean scores) by (criterion, text).

Two lazily built, process-wide indexes (:func:`bundled_catalogue`, :func:`human_quality_index`) read the bundled
tasks and the bundled judge-audit data through ``relgate_tui.engine.certification.tasks`` / ``prompts`` / ``judge_data``. Items
whose content appears twice in a task are served under the first item's id.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from relgate_tui.demo.answers import AnswerDistribution, answer_distribution
from relgate_tui.demo.items import SimItem, sim_item_from_task_item, unknown_item

__all__ = ["CandidateInfo", "ItemCatalogue", "add_audit_data", "bundled_catalogue", "candidate_index", "human_quality_index"]


class ItemCatalogue:
    """Recognises bundled task items by user-message content (and, for the judge, by question text)."""

    def __init__(self, entries: Iterable[tuple[str, SimItem, object, object]] = (), error: str | None = None):
        # entries: (user content, sim item, Task, TaskItem)
        self.by_content: dict[str, SimItem] = {}
        self.by_question: dict[str, tuple[SimItem, object, object]] = {}
        self.error = error
        for content, sim_item, task, task_item in entries:
            self.by_content.setdefault(content, sim_item)
            self.by_question.setdefault(content, (sim_item, task, task_item))
            question = getattr(task_item, "question", "") or ""
            if question:
                self.by_question.setdefault(question, (sim_item, task, task_item))
        self._unknown: dict[str, SimItem] = {}
        self._distributions: dict[tuple[str, str], AnswerDistribution] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.by_content)

    def item_for(self, content: str) -> SimItem:
        """The bundled item with this user-message content, else :func:`unknown_item` (memoised, bounded)."""
        found = self.by_content.get(content)
        if found is not None:
            return found
        found = self._unknown.get(content)
        if found is None:
            found = unknown_item(content)
            with self._lock:
                if len(self._unknown) > 20_000:
                    self._unknown.clear()
                self._unknown[content] = found
        return found

    def distribution(self, model: str, item: SimItem) -> AnswerDistribution:
        """Memoised :func:`answer_distribution`."""
        key = (model, item.item_id)
        found = self._distributions.get(key)
        if found is None:
            found = answer_distribution(model, item)
            with self._lock:
                if len(self._distributions) > 100_000:
                    self._distributions.clear()
                self._distributions[key] = found
        return found

    @classmethod
    def from_tasks(cls, tasks: Iterable[object], item_messages) -> ItemCatalogue:
        """Index ``tasks`` (``engine.certification.tasks.Task``) using ``item_messages(item)`` for the user content."""
        entries = []
        for task in tasks:
            canon = getattr(task, "canon", "") or ""
            name = getattr(task, "name", "")
            for task_item in getattr(task, "items", ()):
                messages = item_messages(task_item)
                content = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), None)
                if isinstance(content, str):
                    entries.append((content, sim_item_from_task_item(task_item, canon, name), task, task_item))
        return cls(entries)


_CATALOGUE: ItemCatalogue | None = None
_CATALOGUE_LOCK = threading.Lock()


def _load_bundled_catalogue() -> ItemCatalogue:
    try:
        from relgate_tui.engine.certification.tasks import bundled_tasks, load_task
        from relgate_tui.engine.transport.prompts import item_messages
    except ImportError as exc:
        return ItemCatalogue(error=f"bundled tasks unavailable: {exc}")
    try:
        tasks = []
        for bundled in bundled_tasks():
            tasks.append(load_task(bundled.name))
        return ItemCatalogue.from_tasks(tasks, item_messages)
    except Exception as exc:  # noqa: BLE001 - the demo must keep serving (with unknown-question answers) if a task fails to load
        return ItemCatalogue(error=f"bundled tasks failed to load: {exc}")


def bundled_catalogue() -> ItemCatalogue:
    """The process-wide catalogue of bundled task items (built once, on first use). ``.error`` says why if empty."""
    global _CATALOGUE
    if _CATALOGUE is None:
        with _CATALOGUE_LOCK:
            if _CATALOGUE is None:
                _CATALOGUE = _load_bundled_catalogue()
    return _CATALOGUE


_HUMAN: dict[tuple[str, str], float] | None = None
_HUMAN_LOCK = threading.Lock()


def _items_of(obj: object, *names: str) -> list:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return list(value.values()) if isinstance(value, dict) and name != "scores" else list(value)
    return []


def _field(obj: object, *names: str) -> object:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _load_human_quality() -> dict[tuple[str, str], float]:
    try:
        from relgate_tui.engine.judging import data as judge_data
    except ImportError:
        return {}
    index: dict[tuple[str, str], float] = {}
    try:
        for bundled in judge_data.bundled_audit_sets():
            audit = judge_data.load_audit_set(bundled.name)
            for audit_input in _items_of(audit, "inputs", "items"):
                for candidate in _items_of(audit_input, "candidates"):
                    text = _field(candidate, "text")
                    scores = _field(candidate, "scores", "human_scores", "human")
                    if not isinstance(text, str) or not isinstance(scores, dict):
                        continue
                    for criterion, value in scores.items():
                        if isinstance(value, (int, float)) and not math.isnan(value):
                            index.setdefault((str(criterion).casefold(), text), float(value))
    except Exception:  # noqa: BLE001 - human scores are an optional refinement; the hash quality is the documented fallback
        return index
    return index


def human_quality_index() -> dict[tuple[str, str], float]:
    """{(criterion casefolded, candidate text): human mean score} from the bundled judge-audit sets (built once)."""
    global _HUMAN
    if _HUMAN is None:
        with _HUMAN_LOCK:
            if _HUMAN is None:
                _HUMAN = _load_human_quality()
    return _HUMAN



@dataclass(frozen=True)
class CandidateInfo:
    """A candidate text of a bundled judge-audit set: the input it answers and the set's criteria
    (casefolded name → (name, description))."""

    input_text: str
    criteria: dict[str, tuple[str, str]]


_CANDIDATES: dict[str, CandidateInfo] | None = None


def _load_candidates() -> dict[str, CandidateInfo]:
    try:
        from relgate_tui.engine.judging import data as judge_data
    except ImportError:
        return {}
    index: dict[str, CandidateInfo] = {}
    try:
        for bundled in judge_data.bundled_audit_sets():
            audit = judge_data.load_audit_set(bundled.name)
            criteria = {name.casefold(): (name, description) for name, description in audit.criteria.items()}
            for audit_input in audit.inputs:
                for candidate in audit_input.candidates:
                    index.setdefault(candidate.text, CandidateInfo(audit_input.input, criteria))
    except Exception:  # noqa: BLE001 - an optional refinement: unknown texts are read from the prompt instead
        return index
    return index


def candidate_index() -> dict[str, CandidateInfo]:
    """{candidate text: :class:`CandidateInfo`} over the bundled judge-audit sets (built once, on first use)."""
    global _CANDIDATES
    if _CANDIDATES is None:
        with _HUMAN_LOCK:
            if _CANDIDATES is None:
                _CANDIDATES = _load_candidates()
    return _CANDIDATES


def add_audit_data(path: str) -> int:
    """Teach the simulated judges an extra judge-audit JSONL file (``engine.judging.data`` format): its candidates'
    human scores become their latent qualities and its inputs are recognised, like the bundled HANNA set. Process-wide
    and additive (a text already known keeps its first scores). Returns the number of candidates read; a bad file
    raises ``judge_data.AuditDataError`` (one line)."""
    from relgate_tui.engine.judging import data as judge_data

    audit = judge_data.load_audit_set(path)
    human, candidates = human_quality_index(), candidate_index()
    criteria = {name.casefold(): (name, description) for name, description in audit.criteria.items()}
    count = 0
    with _HUMAN_LOCK:
        for audit_input in audit.inputs:
            for candidate in audit_input.candidates:
                count += 1
                candidates.setdefault(candidate.text, CandidateInfo(audit_input.input, criteria))
                for criterion, value in candidate.human.items():
                    human.setdefault((criterion.casefold(), candidate.text), value)
    return count
