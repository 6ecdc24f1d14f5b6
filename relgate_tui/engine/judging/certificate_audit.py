"""A stored pairwise judge audit as judge-certificate verdicts (issue 30 §1, ``--audit ID``), zero model calls.

One item per compared pair {a, b} of an input (a < b by id): the judge's repeated verdicts are its ``votes`` (1 = a
preferred), P(yes) their share of "a" among the valid ones (½ without a valid one) and its verdict their majority;
the human verdict is 1 when the data set's human score of a is higher, 0 when lower, none (unlabelled) on a tie.
"Agreement" is then "the judge's preference matches the humans'", its confidence the repetitions' vote share.
The pairs of one input share its prompt and responses, so they are not independent: the input is each pair's
``group`` and the certificate takes the input as its unit (one labelled pair drawn per input,
:func:`relgate_tui.core.judge_certificate_checks.one_per_group`).
Beside the certificate: the position-flip rate (1 − position consistency) and the cycle share of paper 000, from the
audit's own analysis (:func:`relgate_tui.engine.judging.store.reopen_result`).

Fingerprint: the judge's endpoint, model, temperature and top log-probs as stored with the audit, and the hash of
the prompt variant's pairwise template.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from relgate_tui.engine.judging.certificate import Verdicts
from relgate_tui.errors import UserError

__all__ = ["verdicts_from_audit"]


def _pairs(cell: Any) -> list[tuple[str, float, int, tuple[int, ...], int | None, str]]:
    rows = []
    for inp in cell.pairwise.inputs:
        votes: dict[tuple[str, str], list[int]] = {}
        for v in inp.verdicts:
            a, b = sorted((v.first, v.second))
            votes.setdefault((a, b), [])
            if v.is_valid:
                votes[(a, b)].append(int(v.winner == a))
        for (a, b), vs in votes.items():
            p = sum(vs) / len(vs) if vs else 0.5
            ha, hb = inp.human.get(a), inp.human.get(b)
            human = None if ha is None or hb is None or ha == hb else int(ha > hb)
            rows.append((f"{inp.id}/{a}|{b}", float(p), int(p >= 0.5), tuple(vs), human, str(inp.id)))
    return rows


def verdicts_from_audit(ref: str, judge: str | None = None, variant: str | None = None
                        ) -> tuple[Verdicts, dict[str, Any]]:
    """(verdicts, pairwise extras {position_flip_rate, cycle_share}) of a stored audit's pairwise study."""
    from relgate_tui.engine.judging.as_scores import resolve_audit
    from relgate_tui.engine.judging.store import AuditStore, reopen_result
    from relgate_tui.engine.judging.variants import PAIRWISE_TEMPLATE

    path = resolve_audit(ref)
    result = reopen_result(path)
    spec = AuditStore.open(path).spec()
    labels = [str(j.get("name")) for j in result.judges]
    name = judge or labels[0]
    if name not in labels:
        raise UserError(f"audit {path.name}: no judge {name!r} (it has: {', '.join(labels)})")
    var = variant or ("original" if "original" in result.variants else result.variants[0])
    cell = result.cell(name, var)
    if cell.pairwise is None:
        raise UserError(f"audit {path.name}: no pairwise study (protocol {result.protocol}); the certificate needs "
                        "the judge's pairwise preferences")
    rows = _pairs(cell)
    if not rows:
        raise UserError(f"audit {path.name}: no compared pair")
    settings: Mapping[str, Any] = next(j for j in result.judges if str(j.get("name")) == name)
    template = next((v.pairwise for v in spec.variants if v.name == var), None) or PAIRWISE_TEMPLATE
    fingerprint = {"endpoint": settings.get("endpoint"), "model": settings.get("model"),
                   "prompt_hash": hashlib.sha256(template.encode("utf-8")).hexdigest()[:16],
                   "temperature": settings.get("temperature"), "top_logprobs": settings.get("top_logprobs")}
    extras = {"position_flip_rate": 1.0 - cell.pairwise.position.consistency,
              "cycle_share": cell.pairwise.transitivity.cycle_share, "judge": name, "variant": var}
    return Verdicts(f"audit {path.name} ({name}, {var})", tuple(r[0] for r in rows), tuple(r[1] for r in rows),
                    tuple(r[2] for r in rows), tuple(r[4] for r in rows), tuple(r[3] for r in rows),
                    fingerprint, extras, tuple(r[5] for r in rows)), extras
