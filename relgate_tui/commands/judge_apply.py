"""``relgate judge apply CERT --verdicts FILE | --run RUN [--publish]``: a stored judge certificate on new items.

The items whose judge confidence c is at least the certificate's threshold t̂ keep the judge's verdict; the others
are escalated to people and listed least confident first. ``--publish`` puts only the escalated items that no person
has labelled yet into a team-review session (the existing ``review publish`` code, restricted to those items). A
certificate refuses verdicts of another judge: one line names the first fingerprint field that differs; only a PASS
certificate whose id is its content's digest is applied (:func:`relgate_tui.engine.judging.certificate.load`), and
the certificate file is one of the command's inputs (``--json`` never writes over it). When the share of new items
the judge would decide is out of line with the certificate's coverage interval (:func:`_shift`) one line says so
and nothing is decided: the new items do not look like the labelled ones (a shift), and the guarantee is about items
like those. Not a
command module of its own: ``relgate judge apply`` (:mod:`relgate_tui.commands.judge_certificate`) calls it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from relgate_tui.core.text import one_line


def apply_command(args: argparse.Namespace) -> int:
    from relgate_tui.commands._judge_source import load_source, report_rows
    from relgate_tui.core.judge_certificate import apply_threshold
    from relgate_tui.engine.judging import certificate as store
    from relgate_tui.engine.runs.outputs import check_outputs
    from relgate_tui.errors import DataError, UserError

    if args.publish and args.run is None:
        raise UserError("--publish needs --run RUN: the review session shows the run's items")
    cert_path = store.certificate_path(args.cert)
    check_outputs((None if args.json_path in (None, "-") else args.json_path,), (args.verdicts, cert_path))
    doc, cert_path = store.load(args.cert)
    try:
        v = load_source(args)
    except DataError as exc:
        return report_rows(exc)
    name = doc.id
    field = store.differing_field(doc.fingerprint, v.fingerprint)
    if field is not None:
        raise UserError(f"certificate {name} is for another judge: {field} differs (certificate: "
                        f"{one_line(str(doc.fingerprint.get(field)), 80)}, these verdicts: "
                        f"{one_line(str(v.fingerprint.get(field)), 80)}); certify this judge first")
    sel = doc.certificate.selective
    t = sel.threshold
    c, decided, escalated = apply_threshold(list(v.p_yes), list(v.judge), t)
    n = len(v.ids)
    share = decided.size / n
    shift = _shift(share, int(decided.size), n, sel.coverage.lower, sel.coverage.upper, sel.confidence)
    if shift:
        c, decided, escalated = apply_threshold(list(v.p_yes), list(v.judge), None)
    lo, hi = sel.coverage.lower, sel.coverage.upper
    out: dict[str, Any] = {
        "certificate": name, "certificate_file": str(cert_path), "threshold": t, "n_items": n,
        "n_decided": int(decided.size), "n_escalated": int(escalated.size),
        "coverage_interval": [lo, hi], "shift_note": shift,
        "decided": [{"id": v.ids[i], "verdict": v.judge[i], "confidence": float(c[i])} for i in decided],
        "escalated": [{"id": v.ids[i], "judge": v.judge[i], "p_yes": v.p_yes[i], "confidence": float(c[i]),
                       "human": v.human[i]} for i in escalated],
    }
    head = (f"certificate {name}: the judge decides {decided.size} of {n} items "
            f"({decided.size / n:.0%}); {escalated.size} go to people, least confident first")
    if shift:
        print(f"relgate: {one_line(shift, 400)}", file=sys.stderr)
    if args.publish:
        out["session"] = _publish(args, [v.ids[i] for i in escalated if v.human[i] is None], head)
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json(out, args.json_path, inputs=(args.verdicts, cert_path))
    if args.json_path != "-":
        print(head)
        for row in out["escalated"]:
            print(f"  {one_line(row['id'], 80)}\tjudge {'yes' if row['judge'] else 'no'}\t"
                  f"confidence {row['confidence']:.3f}")
    return 0


def _shift(share: float, k: int, n: int, lo: float | None, hi: float | None, confidence: float,
           who: str = "the judge") -> str | None:
    """The line saying the new items do not look like the labelled ones: the two-sided Clopper–Pearson interval of
    the share decided here does not meet the certificate's coverage interval (None when it does); ``who``: what
    would decide (the judge, the cascade)."""
    from relgate_tui.core.certification.intervals import clopper_pearson_interval

    if lo is None or hi is None or not n:
        return None
    here = clopper_pearson_interval(k, n, confidence)
    if here[1] >= lo and here[0] <= hi:
        return None
    return (f"{who} would decide {share:.1%} of these items [{here[0]:.1%}, {here[1]:.1%}], outside the "
            f"certificate's coverage [{lo:.1%}, {hi:.1%}]: these items do not look like the labelled ones, so "
            f"{who} decides none of them — every item goes to people (label a sample of them and certify again)")


def _publish(args: argparse.Namespace, ids: list[str], head: str) -> str | None:
    from relgate_tui.engine.review.publish import publish_run
    from relgate_tui.engine.review.store import open_store

    if not ids:
        print("no unlabelled escalated item: nothing to publish", file=sys.stderr)
        return None
    review = open_store(args.db)
    try:
        sid, k = publish_run(review, args.run, per_item=args.per_item, name=f"escalated by {args.cert}",
                             created_by=review.db.identity(None), runs_root=args.run_dir, only=ids)
    finally:
        review.close()
    print(f"published {k} escalated items for {args.per_item} reviewers each: session {sid}", file=sys.stderr)
    return sid
