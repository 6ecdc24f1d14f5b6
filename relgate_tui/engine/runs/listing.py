"""Finding, listing and repairing stored runs (``relgate runs``, the Runs screen) on top of :mod:`.store`.

Listing reads each run's manifest only: its ``counts`` (samples and labels with the byte sizes of their files) and
``result`` (the headline figures: ``reliability_lower_bound`` is the run's bound, the one its gate decides on — issue
37 §2) are written by the process that wrote the run, so no sample and no results document is parsed; a file whose size changed since is counted on bytes. A run that cannot be read — a corrupt manifest, a
field of the wrong type — is one row with status "unreadable: …". Two directories may hold the same run id (a backup
copy): rows are told apart by their path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from relgate_tui.core.text import one_line
from relgate_tui.engine.records import StoredSample
from relgate_tui.engine.runs.files import (
    RunStoreError,
    _count_lines,
    _is_int,
    _obj,
    _opt_float,
    _read_json,
    _size,
    quarantine_lines,
)
from relgate_tui.engine.runs.store import LABELS, MANIFEST, RESULTS, SAMPLES, Label, RunStore

__all__ = ["looks_simulated", "RunSummary", "batch_in_flight", "summarise", "list_runs", "open_run", "repair_run", "remove_run", "empty_runs"]


def looks_simulated(endpoint: str, model: str, simulated_models: Collection[str]) -> bool:
    """A run against relgate's own simulated models: a loopback endpoint (the embedded demo or ``relgate
    demo-server``) and one of ``simulated_models`` (the demo's model names, given by the front end: the engine never
    imports the demo). Every screen and report marks such a run "simulated"."""
    from urllib.parse import urlsplit

    try:
        host = urlsplit(str(endpoint)).hostname or ""
    except ValueError:
        return False
    return host in ("127.0.0.1", "localhost", "::1") and str(model) in simulated_models


@dataclass(frozen=True)
class RunSummary:
    """One row of ``relgate runs`` / the Runs screen."""

    run_id: str
    path: Path
    task: str
    model: str
    endpoint: str
    created: str
    status: str
    n_items: int
    n_samples: int
    n_labels: int
    reliability_level: float | None = None
    reliability_lower_bound: float | None = None
    m_star: int | None = None
    passed: bool | None = None
    has_gate: bool = False  # the stored results were judged against a gate (``min_reliability``)
    labelling: tuple[int, int] | None = None  # (done, total): items a person verified, of those that need one
    verify_judge: str | None = None  # the run's verification judge model (untrusted text), None without one

    @property
    def status_text(self) -> str:
        """The status as both listings show it: "labelling: 0 of 50" while items wait for a person's verdict (the
        counts the run's last results stored), else the stored status."""
        if self.status == "labelling" and self.labelling is not None:
            return f"labelling: {self.labelling[0]} of {self.labelling[1]}"
        return self.status

    def is_simulated(self, simulated_models: Collection[str]) -> bool:
        """A run against relgate's simulated models, named by the front end (:func:`looks_simulated`)."""
        return looks_simulated(self.endpoint, self.model, simulated_models)

    @property
    def m_star_text(self) -> str:
        """M* as every screen writes it: "∞" when the results say none is finite (JSON null), "—" without results."""
        if self.reliability_level is None:
            return "—"
        return "∞" if self.m_star is None else str(self.m_star)

    @property
    def gate_text(self) -> str:
        """PASS / FAIL / "no gate" (the results were judged against none, as ``relgate report`` says) / "—" (no
        results yet, or a gate left undecided by incomplete sampling)."""
        if self.passed is not None:
            return "PASS" if self.passed else "FAIL"
        return "no gate" if self.reliability_level is not None and not self.has_gate else "—"



def summarise(store: RunStore) -> RunSummary:
    """A :class:`RunSummary` for listings: from the manifest alone when its stored counts are current (no sample
    is parsed); a manifest field of the wrong type raises :class:`RunStoreError` (an "unreadable" row)."""
    m = store.manifest
    where = store.path / MANIFEST
    task = m.get("task", {})
    if not isinstance(task, dict):
        raise RunStoreError(f"{where}: field 'task' is not an object")
    for key in ("model", "endpoint", "created", "status"):
        if not isinstance(m.get(key, ""), str):
            raise RunStoreError(f"{where}: field {key!r} is not a string")
    n_items = task.get("items", 0)
    if not _is_int(n_items) or not isinstance(task.get("name", ""), str):
        raise RunStoreError(f"{where}: field 'task' has a wrong-typed 'name' or 'items'")
    counts = _obj(m, "counts")
    samples_path, labels_path = store.path / SAMPLES, store.path / LABELS
    n_samples = counts.get("samples")
    if not _is_int(n_samples) or counts.get("samples_bytes") != _size(samples_path):
        n_samples = _count_lines(samples_path)
    n_labels = counts.get("labels")
    if not _is_int(n_labels) or counts.get("labels_bytes") != _size(labels_path):
        n_labels = len(store.current_labels())
    res = _obj(m, "result")
    if "result" not in m:  # a run written before the manifest carried the headline: results.json's own
        try:
            res = _read_json(store.path / RESULTS)
        except FileNotFoundError:
            res = {}
        res = res if isinstance(res, dict) else {}
    m_star = res.get("m_star")
    return RunSummary(
        run_id=store.run_id,
        path=store.path,
        task=str(task.get("name", "")),
        model=str(m.get("model", "")),
        endpoint=str(m.get("endpoint", "")),
        created=str(m.get("created", "")),
        status=batch_in_flight(m) or store.status,
        n_items=int(n_items),
        n_samples=int(n_samples or 0),
        n_labels=int(n_labels or 0),
        reliability_level=_opt_float(res.get("reliability_level")),
        reliability_lower_bound=_opt_float(res.get("reliability_lower_bound")),
        m_star=m_star if _is_int(m_star) else None,
        passed=res.get("passed") if isinstance(res.get("passed"), bool) else None,
        has_gate=isinstance(res.get("min_reliability"), (int, float)) or isinstance(res.get("passed"), bool),
        labelling=_labelling(m),
        verify_judge=_verify_judge(m),
    )


def _labelling(manifest: dict) -> tuple[int, int] | None:
    """(done, total) of the manifest's ``labelling`` counts (engine/certification/finish.py), None when absent or
    malformed (a run written before they were kept, a hand edit)."""
    lab = _obj(manifest, "labelling")
    done, total = lab.get("done"), lab.get("total")
    if isinstance(done, int) and isinstance(total, int) and _is_int(done) and _is_int(total) and 0 <= done <= total:
        return done, total
    return None


def _verify_judge(manifest: dict) -> str | None:
    """The verification judge model named in the run's config, None without one (or a malformed config)."""
    judge = _obj(manifest, "config").get("verify_judge_model")
    return judge if isinstance(judge, str) and judge else None


def batch_in_flight(manifest: dict) -> str | None:
    """"batch in flight (id …)" when the run holds a batch the provider may still run or has run
    (engine/certification/batch_rounds.py keeps it in the manifest's ``batch``): rerunning the run's command collects
    it; None otherwise."""
    state = manifest.get("batch")
    pending = state.get("pending") if isinstance(state, dict) else None
    if not isinstance(pending, dict):
        return None
    batches = pending.get("batches")
    ids = [one_line(b, 80) for b in batches if isinstance(b, str)] if isinstance(batches, list) else []
    if isinstance(pending.get("creating"), str):
        ids.append("from file " + one_line(pending["creating"], 80))
    return f"batch in flight (id {', '.join(ids[:3])}{' …' if len(ids) > 3 else ''})" if ids else None


def repair_run(store: RunStore) -> dict[str, int]:
    """Move every corrupt line of ``samples.jsonl`` and ``labels.jsonl`` (not JSON, not an object, or not a
    valid record) to ``<file>.quarantine`` (appended, fsync-ed; nothing is deleted) and rewrite the file with the
    good lines (atomic replace). A torn last line is dropped as on every open. Takes the write lock. Returns the
    number of lines quarantined per file name."""
    store.lock()
    store.release_files()
    moved: dict[str, int] = {}
    for name, valid in ((SAMPLES, _valid_sample), (LABELS, _valid_event)):
        n = quarantine_lines(store.path / name, valid)
        if n is not None:
            moved[name] = n
    store.update_manifest(counts=store.count_files())
    return moved



def _valid_sample(raw: bytes) -> bool:
    try:
        obj = json.loads(raw)
        StoredSample.from_json(obj)
    except (ValueError, TypeError, AttributeError, UnicodeDecodeError):
        return False
    return True


def _valid_event(raw: bytes) -> bool:
    try:
        ev = json.loads(raw)
        if not isinstance(ev, dict):
            return False
        if ev.get("event") == "undo":
            return True
        if ev.get("event") != "label":
            return False
        Label.from_event(ev)
    except (ValueError, TypeError, UnicodeDecodeError):
        return False
    return True


# -------------------------------------------------------------------------------------------------- finding runs
def _run_dirs(runs_root: Path) -> Iterator[Path]:
    try:
        entries = sorted(runs_root.iterdir())
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RunStoreError(f"cannot list runs in {runs_root}: {exc.strerror or exc}") from None
    for p in entries:
        if p.is_dir() and os.path.lexists(p / MANIFEST):  # a manifest that is no regular file: an unreadable row
            yield p


def list_runs(runs_root: str | os.PathLike[str]) -> list[RunSummary]:
    """Summaries of every run under ``runs_root``, newest first. A run that cannot be read (a corrupt manifest, a
    field of the wrong type) is one row with status "unreadable: …" instead of breaking the listing. Two directories
    may hold the same run id (a backup copy): each is its own row, told apart by its path."""
    out: list[RunSummary] = []
    for p in _run_dirs(Path(runs_root)):
        try:
            out.append(summarise(RunStore(p)))
        except (RunStoreError, ValueError, TypeError, KeyError, AttributeError, OSError) as exc:
            out.append(RunSummary(p.name, p, "", "", "", "", f"unreadable: {exc}", 0, 0, 0))
    out.sort(key=lambda s: (s.created, s.run_id, str(s.path)), reverse=True)
    return out


def open_run(run: str | os.PathLike[str], runs_root: str | os.PathLike[str] | None = None) -> RunStore:
    """Open an existing run by path, by id under ``runs_root`` (default: the data dir's runs), or by a unique id
    prefix. Opening takes no lock; the first write does."""
    candidate = Path(run).expanduser()
    if os.path.lexists(candidate / MANIFEST):
        return RunStore(candidate)
    if runs_root is None:
        from relgate_tui.engine.runs.paths import runs_dir

        runs_root = runs_dir()
    root = Path(runs_root)
    name = str(run)
    if os.path.lexists(root / name / MANIFEST):
        return RunStore(root / name)
    matches = [p for p in _run_dirs(root) if p.name.startswith(name)] if name and "/" not in name else []
    if len(matches) == 1:
        return RunStore(matches[0])
    if len(matches) > 1:
        raise RunStoreError(f"run {name!r} is ambiguous: {', '.join(p.name for p in matches[:5])}")
    raise RunStoreError(f"no run {name!r} (looked in {root}; `relgate runs` lists them)")



# ------------------------------------------------------------------------------------------------ removing runs
def remove_run(store: RunStore) -> Path:
    """Delete a run's directory (``relgate runs rm``). Takes the run's write lock first, so a run another relgate
    process is writing is refused (:class:`RunStoreError`); only a directory holding a run manifest is removed."""
    import shutil

    path = Path(store.path)
    if path.is_symlink():  # rmtree refuses a link with a raw OSError; deleting its target is not what was asked
        raise RunStoreError(f"{path}: a symbolic link to {path.resolve()}; refusing to delete through it "
                            "(remove the link itself, or name the run directory)")
    if not (path / MANIFEST).is_file():
        raise RunStoreError(f"{path}: not a run directory (no {MANIFEST})")
    store.lock()
    store.close()
    shutil.rmtree(path)
    return path


def empty_runs(runs_root: str | os.PathLike[str]) -> list[RunSummary]:
    """Runs holding nothing: no sample, no label, no results (a certify that failed before its first answer, a
    setup left before sampling) — what ``relgate runs prune`` removes. Unreadable runs are never listed."""
    return [s for s in list_runs(runs_root)
            if not s.status.startswith(("unreadable", "batch in flight")) and s.n_samples == 0 and s.n_labels == 0
            and s.reliability_level is None]
