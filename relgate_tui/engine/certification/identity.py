"""What makes a run the run it is (issue 31 item 2): the identity its id hashes — the fields that determine the samples
and how they are verified — and the reference classes the verification mode gives each item.

Re-exported by :mod:`relgate_tui.engine.certification.certify`, where the pipeline uses them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from relgate_tui.core.redact import public_url

__all__ = ["VERIFICATION_MODES", "reference_classes", "run_identity"]

VERIFICATION_MODES = ("auto", "human", "audit")
"""How calibration items are verified: "auto" — by their reference answers, a human checks the rest; "human" — a
human checks every calibration item (references still verify the deployment items); "audit" — auto, and a human
re-checks a seeded ``audit_fraction`` of the reference verdicts."""


def run_identity(cfg: Any, task: Any, canon_spec: str) -> dict[str, Any]:
    """The fields that determine the samples and how they are verified (the run id hashes them; see runstore's module
    docstring): a run verified another way (``verification``) or with another verification judge is another run,
    so one run id never tells two stories (issue 31 item 2). Those two keys are present only when they differ from
    the default, so the ids of earlier runs are unchanged."""
    extra: dict[str, Any] = {}
    if cfg.verification != "auto":
        extra["verification"] = cfg.verification
        if cfg.verification == "audit":
            extra["audit_fraction"] = float(cfg.audit_fraction)
    if cfg.verify_judge_model is not None:  # a run without a verification judge never imports the judge modules
        from relgate_tui.engine.judging.verify_judge import config_of

        judge = config_of(cfg)
        assert judge is not None
        extra["verify_judge"] = judge.identity()
    return {**extra,
        "task_sha256": task.sha256,
        "limit": cfg.limit,
        "endpoint": public_url(cfg.endpoint.rstrip("/")),
        "model": cfg.model,
        "system": cfg.system,
        "temperature": float(cfg.temperature),
        "max_tokens": cfg.max_tokens,
        "k_max": cfg.k_max,
        "stopping": cfg.stopping,
        "delta": float(cfg.delta),
        "canon": canon_spec,
        "seed": cfg.seed,
        **({"one_look": int(cfg.one_look)} if getattr(cfg, "one_look", None) is not None else {}),  # issue 33's plans
        **({"population": cfg.population} if getattr(cfg, "population", "task") != "task" else {}),
    }


def reference_classes(prepared: Any) -> Callable[[Any], set[str] | None]:
    """``item → acceptable canonical classes`` (references through the run's canonicalizer,
    :func:`relgate_tui.core.canon.canonicalize_references`), None without a usable reference — and None for every
    calibration item of a "human" verification run (a person verifies those; the verification judge is asked about
    them too, so its verdicts can be checked against the person's)."""
    from relgate_tui.core.canon import canonicalize_references

    cache: dict[str, set[str] | None] = {}
    by_hand = set(prepared.calibration_ids) if prepared.config.verification == "human" else set()

    def refs(item: Any) -> set[str] | None:
        if item.id in by_hand:  # "human": a person verifies every calibration item, its reference is not used
            return None
        if item.id not in cache:
            acceptable = (
                set(canonicalize_references(prepared.canonicalizer, item.answers, item.choices))
                if item.answers else set()
            )
            # a reference the canonicalizer cannot parse verifies nothing: the item stays unverified (counted as
            # pending), rather than being scored as a miss
            cache[item.id] = acceptable or None
        return cache[item.id]

    return refs
