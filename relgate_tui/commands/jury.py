"""``relgate judge jury``: paper 003's jury-on-demand on a judge scores file with several judges (zero judge calls).

::

    relgate judge jury (--scores FILE | --audit ID_OR_PATH) [--criterion NAME] [--splits 10] [--seed 0] [--search 3]
                 [--group-by input|source|id-prefix|none|FIELD]
                 [--embeddings-endpoint URL --embeddings-model NAME [--embeddings-api-key-env VAR]]
                 [--json PATH] [--markdown PATH] [--quiet]

``--audit`` reads a stored judge audit with several judges instead (its direct answers, repetition 0, with the
input and candidate texts of its data set: ``engine/judging/as_scores.py``). Exit 0 when the study ran (whatever it found), 2 on an error (one line).

Splits keep every group of items in one part (``core/jury/groups.py``): ``--group-by input`` (the default when the
items have ``input`` texts: items judging the same source text), ``source``, ``id-prefix`` (the id before its last
separator), any other field of the scores file, or ``none`` (the paper's item-level splits). With item-level splits
and ids that look grouped, a one-line warning says so (stderr, JSON ``warnings``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from relgate_tui.core.text import printable

NAME = "jury"


def register(sub: Any) -> None:
    p = sub.add_parser(NAME, help="jury-on-demand: per-item judge selection and weighting (paper 003; zero calls)",
                       description="Learn per judge when it agrees with humans from the item's texts, then score each "
                                   "item with the K judges predicted most reliable; compare with static juries.")
    p.add_argument("--scores", metavar="FILE", help="judge scores file with several judges per item")
    p.add_argument("--audit", metavar="ID_OR_PATH",
                   help="instead of --scores: a stored judge audit with several judges (its id or directory)")
    p.add_argument("--criterion", metavar="NAME", help="the criterion (required when the file has several)")
    p.add_argument("--splits", type=int, default=10, help="random 60/20/20 splits (default 10)")
    p.add_argument("--group-by", metavar="WHAT",
                   help="keep each group of items in one split part: input (default when the file has input texts), "
                        "source, id-prefix, none (item-level, the paper's), or a field of the scores file")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--search", type=int, default=3, metavar="N", help="random-search configurations per predictor")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="run the splits on N processes (same result)")
    p.add_argument("--embeddings-endpoint", metavar="URL", help="OpenAI-compatible base URL serving /v1/embeddings")
    p.add_argument("--embeddings-model", metavar="NAME", help="the embeddings model")
    p.add_argument("--embeddings-api-key-env", metavar="VAR", help="NAME of the variable holding its API key")
    p.add_argument("--json", dest="json_path", metavar="PATH", help="write the JSON document ('-' = stdout)")
    p.add_argument("--markdown", metavar="PATH", help="write a Markdown report")
    p.add_argument("--quiet", action="store_true", help="no table on stdout")



def _table(study: Any) -> str:
    comp = {c.baseline: c for c in study.comparisons}
    lines = [f"splits: {study.splits} × 60/20/20, {study.split_words()}",
             f"{'method':<34}{'Kendall τ':>11}{'sd':>7}{'p corr':>8}{'p Wilc':>8}{'δ':>7}"]
    for name, m in sorted(study.methods.items(), key=lambda kv: -kv[1].tau_mean):
        c = comp.get(name)
        extra = f"{c.p_corrected:>8.3f}{c.p_value:>8.3f}{c.cliffs_delta:>+7.2f}" if c else f"{'':>8}{'':>8}{'':>7}"
        mark = " *" if c and c.p_corrected < study.claim_alpha else ""
        lines.append(f"{printable(name, 33):<34}{m.tau_mean:>11.3f}{m.tau_sd:>7.3f}{extra}{mark}")
    verdict = "claims" if study.claims_improvement else "does not claim"
    lines.append(f"jury-on-demand {verdict} an improvement (one-sided corrected resampled t-test, Nadeau & Bengio, "
                 f"over {study.splits} splits; * p < {study.claim_alpha}; the paper's Wilcoxon beside it overstates "
                 f"significance: the splits overlap); δ = share of splits won − lost; K per split "
                 f"{list(study.k_per_split)}; features: {', '.join(study.feature_groups)}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from relgate_tui import __version__
    from relgate_tui.commands.judge_intervals import source_table
    from relgate_tui.core.jsonsafe import jsonable
    from relgate_tui.core.jury.study import run_jury_study
    from relgate_tui.engine.certification.report import emit_json
    from relgate_tui.engine.judging.scores_file import load_scores
    from relgate_tui.engine.judging.studies import build_data, jury_caveats
    from relgate_tui.errors import UserError

    if args.splits < 2:
        raise UserError("--splits must be at least 2 (the Wilcoxon test compares splits)")
    from relgate_tui.engine.runs.outputs import check_outputs, echo, write_display

    inputs = (args.scores,)
    check_outputs((args.json_path, args.markdown), inputs)
    table, audit = source_table(args)
    if table is None:
        table = load_scores(args.scores)
    group_by = args.group_by.strip() if args.group_by is not None else None
    if group_by == "":
        raise UserError("--group-by needs a value (input, source, id-prefix, none or a field)")
    data, texts = build_data(table, args.criterion, group_by)
    for w in data.warnings:
        print(f"relgate: warning: {w}", file=sys.stderr)
    embeddings = None
    if args.embeddings_endpoint or args.embeddings_model:
        if not (args.embeddings_endpoint and args.embeddings_model):
            raise UserError("--embeddings-endpoint and --embeddings-model go together")
        from relgate_tui.core.jury.features import TOPICS
        from relgate_tui.engine.transport.embeddings import embed_texts

        embeddings = {}
        for comp, tx in texts.items():
            if any(tx):
                emb = embed_texts(args.embeddings_endpoint, args.embeddings_model, [t or "" for t in tx],
                                  api_key_env=args.embeddings_api_key_env)
                anchors = embed_texts(args.embeddings_endpoint, args.embeddings_model, list(TOPICS),
                                      api_key_env=args.embeddings_api_key_env)
                embeddings[comp] = (emb, anchors)
    study = run_jury_study(data, texts=texts, embeddings=embeddings, splits=args.splits, seed=args.seed,
                           n_search=args.search, workers=max(1, args.workers))
    if not args.quiet and args.json_path != "-":
        if note := table.unscored_note():
            echo(note)
        echo(_table(study))
        for line in jury_caveats(study):  # small samples say so (issue 24 §7)
            echo(f"caveat: {line}")
    if args.json_path:
        source = {"audit": audit.to_json()} if audit is not None else {"scores_file": str(args.scores)}
        doc = {"relgate_version": __version__, **source,
               "criterion": args.criterion or table.criteria()[0], "unscored_rows": table.unscored(),
               "embeddings": "endpoint" if embeddings else "tf-idf + truncated SVD (text-only fallback)"}
        emit_json(jsonable(doc | study.to_json()), args.json_path, inputs)
    if args.markdown:
        write_display(args.markdown, study.to_markdown(), inputs=inputs)
    return 0
