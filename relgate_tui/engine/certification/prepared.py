"""A run made ready to sample (phase 1 of :mod:`relgate_tui.engine.certification.certify`): :class:`Prepared`, made by
:func:`prepare` from a :class:`~relgate_tui.engine.certification.options.CertifyConfig` or by :func:`open_prepared`
from a stored run.

Nothing here imports numpy, nor the statistics (:mod:`relgate_tui.engine.certification.analysis`, the core's
certification): a ``relgate certify`` run sends its first request without them and loads them while it samples
(:func:`relgate_tui.engine.certification.run_start.prefetch`). The calibration/deployment split — a seeded numpy
permutation (:func:`~relgate_tui.engine.certification.analysis.split_items`) that sampling does not use — is a
:class:`Split`, computed on first use and then kept; ``n_cal`` is checked at once.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, cast

from relgate_tui.core.canon import Canonicalizer
from relgate_tui.core.certification.stopping_base import NoStopping, StoppingRule
from relgate_tui.core.redact import public_url
from relgate_tui.engine.certification.identity import VERIFICATION_MODES, run_identity
from relgate_tui.engine.certification.options import CertifyConfig
from relgate_tui.engine.certification.tasks import TaskError, dump_items, load_task
from relgate_tui.engine.runs.labels_file import parse_labels_file
from relgate_tui.engine.runs.store import Label, RunStore, RunStoreError
from relgate_tui.errors import CertifyError

__all__ = ["Prepared", "Split", "open_prepared", "prepare", "stopping_rule"]


def stopping_rule(name: str, delta: float) -> StoppingRule:
    """The run's rule, as :func:`~relgate_tui.core.certification.stopping.get_stopping_rule` names it; ``"none"``
    made from :mod:`~relgate_tui.core.certification.stopping_base` without importing the rules that stop (numpy)."""
    if name == NoStopping.name:
        return cast(StoppingRule, NoStopping(delta=delta))
    from relgate_tui.core.certification.stopping import get_stopping_rule

    return get_stopping_rule(name, delta)


class Split:
    """The run's calibration and deployment ids (:func:`~relgate_tui.engine.certification.analysis.split_items` of
    ``ids``, ``n_cal``, ``seed``), computed on the first :meth:`parts` and kept (under a lock: the TUI reads it from
    worker threads). :func:`prepare` and :func:`open_prepared` check ``n_cal`` against the items before they make
    one, so a bad one is an error before anything is written."""

    def __init__(self, ids: tuple[str, ...], n_cal: int | None, seed: int) -> None:
        self.ids, self.n_cal, self.seed = ids, n_cal, seed
        self._parts: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self._lock = threading.Lock()

    def parts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(calibration ids, deployment ids)."""
        if self._parts is None:
            with self._lock:
                if self._parts is None:
                    from relgate_tui.engine.certification.analysis import split_items

                    self._parts = split_items(self.ids, self.n_cal, self.seed)
        return self._parts


@dataclass
class Prepared:
    """A validated config with its task, canonicalizer, stopping rule, split and open run store."""

    config: CertifyConfig
    task: Any
    items: tuple[Any, ...]
    canon_spec: str
    canonicalizer: Canonicalizer
    rule: Any
    split: Split
    store: RunStore
    file_labels: list[Label] = field(default_factory=list)
    canon_source: str = ""  # why ``canon_spec`` (issue 31 item 4): "--canon", the bundled task's, a suggestion

    @property
    def calibration_ids(self) -> tuple[str, ...]:
        return self.split.parts()[0]

    @property
    def deployment_ids(self) -> tuple[str, ...]:
        return self.split.parts()[1]

    @property
    def roles(self) -> dict[str, str]:
        return {**{i: "calibration" for i in self.calibration_ids}, **{i: "deployment" for i in self.deployment_ids}}

    @property
    def header(self) -> dict[str, Any]:
        return {
            "run_id": self.store.run_id,
            "endpoint": public_url(self.config.endpoint),
            "model": self.config.model,
            "task": {"name": self.task.name, "sha256": self.task.sha256, "items": len(self.items)},
        }

    def close(self) -> None:
        self.store.close()


def prepare(cfg: CertifyConfig) -> Prepared:
    """Phase 1: validate, load the task and the labels file (nothing is written before both are known to be good),
    resolve the canonicalizer and the stopping rule, split the items, open or resume the run."""
    from relgate_tui.core.canon import get_canonicalizer
    from relgate_tui.engine.runs.paths import runs_dir

    cfg.validate()
    task = load_task(cfg.task, limit=cfg.limit, suggest=cfg.canon is None)
    items = tuple(task.items[: cfg.limit] if cfg.limit else task.items)
    if not items:
        raise CertifyError(f"task {task.name!r} has no items")
    canon_spec = cfg.canon or task.canon
    canon_source = "chosen (--canon)" if cfg.canon else (task.canon_source or "the task's")
    canonicalizer = get_canonicalizer(canon_spec)
    rule = stopping_rule(cfg.stopping, cfg.delta)
    ids = [it.id for it in items]
    if cfg.n_cal is not None and cfg.n_cal > len(ids):
        raise CertifyError(f"--n-cal {cfg.n_cal} is larger than the number of items ({len(ids)})")
    split = Split(tuple(ids), cfg.n_cal, cfg.seed)
    file_labels = parse_labels_file(cfg.labels, ids) if cfg.labels else []
    identity = run_identity(cfg, task, canon_spec)
    info = {
        "task": {"name": task.name, "path": str(task.path), "sha256": task.sha256, "items": len(items)},
        "model": cfg.model,
        "endpoint": public_url(cfg.endpoint),
        "seed": cfg.seed,
        "config": cfg.public_dict(),
        "canon": {"spec": canon_spec, "source": canon_source},  # config.canon None = "the task's": say which
    }
    store = RunStore.create_or_open(runs_dir(cfg.run_dir), identity, label=f"{task.name} {cfg.model}", info=info)
    try:
        if store.items_copy_path() is None:  # the run opens offline, whatever happens to the task file
            store.write_items_copy(dump_items(items))
    except BaseException:
        store.close()
        raise
    return Prepared(cfg, task, items, canon_spec, canonicalizer, rule, split, store, file_labels,
                    canon_source)


def open_prepared(path: str | os.PathLike[str]) -> Prepared:
    """Reopen the stored run at ``path`` as it is — for viewing or resuming — without a network call, a lock or a
    write (the first write of a resume takes the lock). The directory may have been renamed or copied: the run is
    the one at ``path``. The items come from the task file when it still has the stored hash, else from the run's
    own copy (``items.jsonl``); a labels file is not read again (its verdicts are in the run). Raises
    :class:`CertifyError` or :class:`~relgate_tui.engine.runs.store.RunStoreError` (one line)."""
    from relgate_tui.core.canon import get_canonicalizer

    run_path = Path(path)
    store = RunStore(run_path)  # reads only
    manifest = store.manifest
    known = {f.name for f in fields(CertifyConfig)}
    raw = manifest.get("config")
    identity = manifest.get("identity")
    task_info = manifest.get("task")
    if not isinstance(raw, dict) or not isinstance(identity, dict) or not isinstance(task_info, dict):
        raise RunStoreError(f"{run_path / 'manifest.json'}: the run's manifest has no configuration")
    tui = manifest.get("tui")
    if "verification" not in raw and isinstance(tui, dict) and tui.get("verification") in VERIFICATION_MODES:
        raw = {**raw, "verification": tui["verification"]}  # a TUI run made before the mode was in its config
        if isinstance(tui.get("audit_fraction"), (int, float)) and not isinstance(tui["audit_fraction"], bool):
            raw["audit_fraction"] = float(tui["audit_fraction"])
    try:
        cfg = CertifyConfig(**{k: v for k, v in raw.items() if k in known})
        cfg = replace(cfg, run_dir=str(run_path.parent), labels=None).validate()
    except (TypeError, ValueError) as exc:
        raise RunStoreError(f"{run_path / 'manifest.json'}: unreadable configuration ({exc})") from None
    stored_sha = str(task_info.get("sha256") or "")
    task = None
    try:
        task = load_task(cfg.task, limit=cfg.limit, suggest=False)  # the canonicalizer is the stored one
    except TaskError:
        pass
    if task is None or (stored_sha and task.sha256 != stored_sha):
        copy = store.items_copy_path()
        if copy is None:
            why = "changed" if task is not None else "cannot be read"
            raise CertifyError(f"the task file {cfg.task} {why} since run {run_path.name} was made, and the run "
                               "holds no copy of its items")
        copied = load_task(str(copy), suggest=False)
        task = replace(copied, name=str(task_info.get("name") or copied.name), sha256=stored_sha)
    items = tuple(task.items[: cfg.limit] if cfg.limit else task.items)
    canon_spec = str(identity.get("canon") or cfg.canon or task.canon)
    ids = [it.id for it in items]
    if cfg.n_cal is not None and cfg.n_cal > len(ids):
        raise CertifyError(f"{run_path}: n_cal {cfg.n_cal} is larger than the number of items ({len(ids)})")
    split = Split(tuple(ids), cfg.n_cal, cfg.seed)
    stored_canon = manifest.get("canon")
    source = str(stored_canon.get("source") or "") if isinstance(stored_canon, dict) else ""
    return Prepared(cfg, task, items, canon_spec, get_canonicalizer(canon_spec),
                    stopping_rule(cfg.stopping, cfg.delta), split, store, [],
                    source or ("chosen (--canon)" if cfg.canon else "stored with the run"))
