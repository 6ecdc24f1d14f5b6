"""``relgate judge certify`` / ``judge apply`` with several ``--verdicts`` (a judge cascade, cheapest first; issue 38).
Not a command module (leading underscore): :mod:`relgate_tui.commands.judge_certificate` dispatches here when
``--verdicts`` is given more than once; one ``--verdicts`` goes on exactly as before. Same exit codes: 0 PASS, 1 FAIL,
2 error, 3 not decidable. The files and the document are :mod:`relgate_tui.engine.judging.cascade`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

_FINGERPRINT = ("judge_endpoint", "judge_model", "prompt_hash", "temperature", "top_logprobs")


def cascade_files(args: argparse.Namespace) -> list[str]:
    """The sources of a cascade — two or more ``--verdicts`` files, or ``--from-run`` runs —, else []: one
    ``--verdicts`` is put back as the single path the single-judge code reads."""
    from relgate_tui.errors import UserError

    files = [args.verdicts] if isinstance(args.verdicts, str) else list(args.verdicts or [])
    runs = list(getattr(args, "from_run", None) or [])
    if runs:
        if files or args.run is not None or args.audit is not None:
            raise UserError("--from-run builds a cascade from runs alone: drop --verdicts / --run / --audit")
        if len(runs) < 2:
            raise UserError("--from-run is a cascade: give it once per judge, cheapest first (one run: --run RUN)")
        return runs
    if len(files) >= 2:
        return files
    args.verdicts = files[0] if files else None
    return []


def _load(args: argparse.Namespace, files: list[str]) -> list[Any]:
    from relgate_tui.engine.judging import certificate as store
    from relgate_tui.errors import UserError

    if args.run is not None or args.audit is not None:
        raise UserError("a cascade reads its judges from --verdicts files or --from-run runs: drop --run / --audit")
    given = [f"--{name.replace('_', '-')}" for name in _FINGERPRINT if getattr(args, name, None) is not None]
    if given:
        raise UserError(f"{', '.join(given)}: a judge's fingerprint options describe one judge; a cascade of several "
                        "--verdicts files takes none")
    if getattr(args, "from_run", None):
        from relgate_tui.engine.judging.cascade import verdicts_from_runs

        return verdicts_from_runs(files, args.run_dir)  # fingerprints from the runs
    return [store.load_verdicts_file(path) for path in files]


def cascade_command(args: argparse.Namespace, files: list[str], exits: dict[str, int]) -> int:
    """Certify or apply a cascade; ``exits``: the verdicts' exit codes (``judge certify``'s)."""
    from relgate_tui.commands._judge_source import report_rows
    from relgate_tui.engine.runs.outputs import check_outputs
    from relgate_tui.errors import DataError

    outputs = (None if args.json_path in (None, "-") else args.json_path, getattr(args, "markdown", None))
    inputs = [] if getattr(args, "from_run", None) else files  # runs are no file an output could overwrite
    if args.judge_command == "apply":
        from relgate_tui.engine.judging.certificate import certificate_path

        check_outputs(outputs, [*inputs, str(certificate_path(args.cert))])  # the certificate is an input too
    else:
        check_outputs(outputs, inputs)
    try:
        vs = _load(args, files)
        if args.judge_command == "apply":
            return _apply(args, inputs, vs)
        return exits[_certify(args, inputs, vs)]
    except DataError as exc:
        return report_rows(exc)


def _certify(args: argparse.Namespace, files: list[str], vs: list[Any]) -> str:
    from relgate_tui.core.text import one_line
    from relgate_tui.engine.judging import certificate as store
    from relgate_tui.engine.judging.cascade import compute_cascade, render_cascade_markdown
    from relgate_tui.engine.runs.outputs import write_display
    from relgate_tui.errors import UserError

    if args.plan:
        raise UserError("--plan reads no verdicts: drop --verdicts")
    if args.require:
        raise UserError("--require consistency>=X is for one judge; a cascade takes none")
    from relgate_tui.core.judge_cascade import COST

    cost = COST if args.judge_cost is None else args.judge_cost
    if not 0.0 <= cost < 1e6:
        raise UserError(f"--judge-cost must be ≥ 0, got {cost:g}")
    doc = compute_cascade(vs, agreement=args.agreement, confidence=args.confidence, min_coverage=args.min_coverage,
                          cost=cost)
    cert_id, path = store.save_document(doc)
    doc = {**doc, "id": cert_id}
    md = render_cascade_markdown(doc)
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json(doc, args.json_path, inputs=files)
    if args.markdown:
        write_display(args.markdown, md, inputs=files)
    if args.json_path != "-":
        sys.stdout.write(md)
    print(one_line(f"stored certificate {cert_id} ({path})", 2000), file=sys.stderr, flush=True)
    return str(doc["verdict"])


def _apply(args: argparse.Namespace, files: list[str], vs: list[Any]) -> int:
    from relgate_tui.commands.judge_apply import _shift
    from relgate_tui.core.text import one_line
    from relgate_tui.engine.judging.cascade import apply_cascade_doc, load_cascade
    from relgate_tui.errors import UserError

    if args.publish:
        raise UserError("--publish needs --run RUN; a cascade applies to --verdicts files (publish the escalated "
                        "items from the JSON's 'escalated' list)")
    cert, cas, cert_path = load_cascade(args.cert)
    lo, hi = cas.coverage_lower, cas.coverage_upper
    doc, head, shift = apply_cascade_doc(cert, cas, vs,
                                         lambda k, n: _shift(k / n, k, n, lo, hi, cas.confidence, "the cascade"))
    doc = {**doc, "certificate_file": str(cert_path)}
    if shift:
        print(f"relgate: {one_line(shift, 400)}", file=sys.stderr)
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json(doc, args.json_path, inputs=[*files, str(cert_path)])
    if args.json_path != "-":
        print(head)
        for row in doc["escalated"]:
            conf = "—" if row["confidence"] is None else f"{row['confidence']:.3f}"
            print(f"  {one_line(str(row['id']), 80)}\tjudge {'yes' if row['judge'] else 'no'}\tconfidence {conf}")
    return 0
