"""``relgate review …``: team review of a run's calibration items (issue 21).

::

    relgate review init --db URL                      schema (+ PostgreSQL roles, grants, row-level policies)
    relgate review grant ROLE [--adjudicator] --db URL
    relgate review publish RUN [--per-item R] [--name NAME] [--json PATH|-]
    relgate review open SESSION [--as NAME]           the spot-check screen on the queue (y n x u s e)
    relgate review label SESSION --labels FILE [--as NAME]   headless labelling through the queue
    relgate review status SESSION [--policy P] [--json PATH|-]
    relgate review adjudicate SESSION [--decide ITEM=VERDICT …] [--json PATH|-]
    relgate review pull SESSION [--policy strict|majority] [--run-dir DIR]

The database is ``--db``, else ``$RELGATE_DB``, else the embedded SQLite file in the data dir. Exit 0 done, 2 error
(one line, never a password), 3 ``label`` ended with labels still waiting in the journal (rerun to send them).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

NAME = "review"
EXIT_WAITING = 3


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(NAME, help="team review: several reviewers label one run (SQLite or PostgreSQL)",
                              description="Several reviewers label a run's calibration items; agreement and "
                                          "adjudication feed the guarantee.")
    sub = p.add_subparsers(dest="review_command", metavar="ACTION", parser_class=p.__class__, required=True)

    def db(q: argparse.ArgumentParser) -> None:
        q.add_argument("--db", metavar="URL", help="postgresql://… or sqlite:///FILE (default: $RELGATE_DB, else "
                                                   "the embedded file in the data dir)")

    def as_(q: argparse.ArgumentParser) -> None:
        q.add_argument("--as", dest="as_name", metavar="NAME", help="reviewer name (embedded store only; on "
                                                                    "PostgreSQL you are your database role)")

    def policy(q: argparse.ArgumentParser) -> None:
        q.add_argument("--policy", choices=("strict", "majority"), default="strict",
                       help="disputed items not adjudicated: strict = a miss (default), majority = the majority "
                            "label (odd R)")

    q = sub.add_parser("init", help="create the schema (and on PostgreSQL the roles and policies)")
    db(q)
    q = sub.add_parser("grant", help="put a database role in relgate_reviewer (or relgate_adjudicator)")
    q.add_argument("role", metavar="ROLE")
    q.add_argument("--adjudicator", action="store_true")
    db(q)
    q = sub.add_parser("publish", help="put a run's calibration items into a new session")
    q.add_argument("run", metavar="RUN", help="run id (or unique prefix) or run directory")
    q.add_argument("--per-item", type=int, default=2, metavar="R", help="distinct reviewers per item (default 2)")
    q.add_argument("--name", metavar="NAME")
    q.add_argument("--lease", type=float, default=600.0, metavar="SECONDS",
                   help="how long a claim holds an item (default 600)")
    q.add_argument("--json", metavar="PATH", dest="json_path")
    q.add_argument("--run-dir", metavar="DIR")
    db(q)
    q = sub.add_parser("open", help="label in the terminal UI (same keys as the spot-check)")
    q.add_argument("session", metavar="SESSION")
    db(q)
    as_(q)
    q = sub.add_parser("label", help="headless labelling from a labels file, item by item through the queue")
    q.add_argument("session", metavar="SESSION")
    q.add_argument("--labels", required=True, metavar="FILE", help="the format `certify --labels` reads")
    q.add_argument("--retry-for", type=float, default=600.0, metavar="SECONDS",
                   help="keep retrying an unreachable database this long (default 600)")
    q.add_argument("--quiet", action="store_true")
    db(q)
    as_(q)
    q = sub.add_parser("status", help="progress, agreement, disputes")
    q.add_argument("session", metavar="SESSION")
    q.add_argument("--json", metavar="PATH", dest="json_path")
    policy(q)
    db(q)
    q = sub.add_parser("adjudicate", help="the disputed items with every label; --decide ITEM=VERDICT settles one")
    q.add_argument("session", metavar="SESSION")
    q.add_argument("--decide", action="append", default=[], metavar="ITEM=VERDICT",
                   help="VERDICT: a rank (1, 2, …), none or skip; repeatable")
    q.add_argument("--json", metavar="PATH", dest="json_path")
    db(q)
    as_(q)
    q = sub.add_parser("pull", help="the final labels into the local run (source review:<session>)")
    q.add_argument("session", metavar="SESSION")
    q.add_argument("--run-dir", metavar="DIR")
    policy(q)
    db(q)


def _say(text: str, quiet: bool = False) -> None:
    if not quiet:
        from relgate_tui.commands.import_log import safe

        print(safe(text, 1000), file=sys.stderr, flush=True)


def _est(e: Any) -> str:
    if not isinstance(e, dict) or e.get("value") is None:
        return "—"
    ci = e.get("ci")
    return f"{e['value']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def run(args: argparse.Namespace) -> int:
    from relgate_tui.engine.review.store import ReviewStore, open_store

    cmd = args.review_command
    if cmd == "init":
        from relgate_tui.engine.review.db import connect

        store = ReviewStore(connect(args.db))
        try:
            for line in store.init():
                _say(line)
            _say(f"review store ready: {store.db.public}")
        finally:
            store.close()
        return 0
    from relgate_tui.engine.runs.outputs import check_outputs

    check_outputs([getattr(args, "json_path", None)])  # before any work; emit_json checks again when it writes
    store = open_store(args.db, check=cmd != "label")  # label waits for an unreachable server instead
    try:
        return int(_COMMANDS[cmd](store, args))
    finally:
        store.close()


def _grant(store: Any, args: argparse.Namespace) -> int:
    group = store.grant(args.role, adjudicator=args.adjudicator)
    _say(f"{args.role} is now a member of {group}")
    return 0


def _publish(store: Any, args: argparse.Namespace) -> int:
    from relgate_tui.engine.review.publish import publish_run

    if args.lease <= 0:
        raise ValueError(f"--lease must be positive, got {args.lease!r}")
    left_out: list[str] = []
    sid, n = publish_run(store, args.run, per_item=args.per_item, name=args.name,
                         created_by=store.db.identity(None), runs_root=args.run_dir, lease_seconds=args.lease,
                         left_out=left_out)
    if left_out:
        from relgate_tui.core.text import counted, one_line

        _say(f"{counted(len(left_out), 'item')} left out: the id holds a NUL character, which a review store cannot "
             f"keep ({', '.join(repr(one_line(i.replace(chr(0), '␀'), 40)) for i in left_out[:5])})")
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json({"session": sid, "items": n, "per_item": args.per_item}, args.json_path)
    if args.json_path != "-":
        print(sid, flush=True)
    _say(f"published {n} items for {args.per_item} reviewers each: session {sid}")
    return 0


def _open(store: Any, args: argparse.Namespace) -> int:
    launch_tui = args.launch_tui  # the shell's launcher (cli.py): commands never import the TUI or the shell
    return int(launch_tui(store, args.session, store.db.identity(args.as_name)))


def _label(store: Any, args: argparse.Namespace) -> int:
    from relgate_tui.core.review.verdicts import verdict_code
    from relgate_tui.engine.review.client import Reviewer
    from relgate_tui.engine.review.db import ReviewUnreachable
    from relgate_tui.engine.review.summary import counted
    from relgate_tui.engine.runs.labels_file import parse_labels_file

    wanted = {lab.item: verdict_code(rank=lab.rank, none=lab.none, skip=lab.skip)
              for lab in parse_labels_file(args.labels)}
    deadline = None
    told = False

    def unreachable(exc: Exception, waiting: int) -> bool:
        """Say it once; True while it is worth retrying."""
        nonlocal deadline, told
        if deadline is None:
            deadline = time.monotonic() + args.retry_for
        if not told:
            _say(f"{exc}: {counted(waiting, 'label')} waiting", args.quiet)
            told = True
        if time.monotonic() > deadline:
            _say(f"gave up after {args.retry_for:g} s: {counted(waiting, 'label')} {'waits' if waiting == 1 else 'wait'} in the journal; rerun the same "
                 "command to send them")
            return False
        time.sleep(0.2)
        return True

    while True:  # the server may be down when we start: the journal still says what waits
        try:
            store.check()
            name = store.db.identity(args.as_name)
            info = store.session(args.session)
            break
        except ReviewUnreachable as exc:
            from relgate_tui.engine.review.journal import Journal, find_journal

            path = find_journal(store.db.public, args.session, store.db.expected_identity(args.as_name))
            waiting = 0
            if path is not None:
                j = Journal(path)
                waiting = len(j.waiting())
                j.close()
            if not unreachable(exc, waiting):
                return EXIT_WAITING
    reviewer = Reviewer(store, info, name)
    for problem in reviewer.journal.problems:
        _say(problem)
    done = rejected = absent = 0
    exclude: set[str] = set()
    try:
        while True:
            try:
                sent = reviewer.flush()
                if sent.unreachable:
                    raise ReviewUnreachable(sent.unreachable)
                rejected += len(sent.rejected)
                for why in sent.rejected:
                    _say(f"not taken: {why}", args.quiet)
                claim = reviewer.next_item(exclude)
            except ReviewUnreachable as exc:
                if not unreachable(exc, reviewer.waiting):
                    return EXIT_WAITING
                continue
            if told:
                _say("database back: journal sent", args.quiet)
                told, deadline = False, None
            if claim is None:
                break
            verdict = wanted.get(claim.item_id)
            n_cand = len(claim.item.candidates)
            if verdict is None or (verdict.isdigit() and int(verdict) > n_cand):
                if verdict is not None:
                    _say(f"{claim.item_id}: rank {verdict} does not exist ({n_cand} candidates); left for others",
                         args.quiet)
                absent += 1
                exclude.add(claim.item_id)
                store.release(info.id, claim.item_id, name)
                continue
            # journaled first; a failed send is retried at the loop's top; the next item is claimed with the label
            reviewer.label(claim.item_id, verdict, claim_next=True, exclude=exclude)
            done += 1
    finally:
        reviewer.close()
    _say(f"{name}: {counted(done, 'label')} given, {rejected} not taken (slot filled meanwhile), {counted(absent, 'item')} not in the "
         f"labels file; session {info.id}", args.quiet)
    return 0


def _status(store: Any, args: argparse.Namespace) -> int:
    from relgate_tui.engine.review.status import session_state, status_document
    from relgate_tui.engine.review.summary import as_misses, counted

    doc = status_document(session_state(store, args.session, args.policy))
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json(doc, args.json_path)
    ag = doc["agreement"]
    _say(f"session {doc['session']} ({doc['name']}): {counted(doc['labels'], 'label')} on {counted(doc['items'], 'item')}, "
         f"{doc['required_per_item']} per item; {len(doc['final'])} final, {len(doc['disputed'])} disputed, "
         f"{len(doc['adjudicated'])} adjudicated, {len(doc['pending'])} pending")
    if doc["policy"] == "strict" and doc["counted_as_misses"]:
        _say(f"{as_misses(len(doc['counted_as_misses']))} (strict policy)")
    _say(f"Fleiss κ {_est(ag['fleiss_kappa'])} · Krippendorff α {_est(ag['krippendorff_alpha'])} (95% bootstrap)")
    for p in ag["pairs"]:
        _say(f"  Cohen κ {p['a']} · {p['b']}: {_est(p['cohen_kappa'])}")
    for name, r in doc["reviewers"].items():
        _say(f"  {name}: {counted(r['labels'], 'label')}, agreement with final {_est(r['agreement_with_final'])}")
    for line in doc["left_out"]:
        _say(line)
    if not doc["complete_view"]:
        _say("(your role may read only part of the labels: the figures cover what it may read)")
    return 0


def _adjudicate(store: Any, args: argparse.Namespace) -> int:
    from relgate_tui.core.review.verdicts import parse_verdict
    from relgate_tui.engine.review.status import disputed_queue, session_state

    state = session_state(store, args.session, need_all=True)
    who = store.db.identity(args.as_name)
    for spec in args.decide:
        item, sep, verdict = str(spec).rpartition("=")  # an item id may hold '=', a verdict never does
        if not sep or not item:
            raise ValueError(f"--decide wants ITEM=VERDICT, got {spec!r}")
        parse_verdict(verdict.strip())
        store.adjudicate(state.info.id, item.strip(), verdict.strip(), who)
        _say(f"{item.strip()} → {verdict.strip()}")
    if args.decide:
        state = session_state(store, args.session, need_all=True)
    queue = disputed_queue(state)
    items = {item: store.item(state.info.id, item) for item, _ in queue}
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json({"session": state.info.id, "disputed": [{"item": i, "labels": labs} for i, labs in queue]},
                  args.json_path)
    _say(f"{len(queue)} disputed item{'s' if len(queue) != 1 else ''} to adjudicate")
    for item, labs in queue:  # the question and the candidates, so the labels can be judged here (issue 31 item 12)
        view = items[item]
        answers = {str(c.rank): c.answer for c in view.candidates}
        _say(f"  {item}: {view.question}"[:300])
        for c in view.candidates:
            _say(f"      {c.rank}. {c.answer[:120]}  ({c.count}/{view.n_samples} samples)")
        _say("      labels: " + ", ".join(f"{r} {v}" + (f" ({answers[v][:40]})" if v in answers else "")
                                          for r, v in sorted(labs.items())))
    return 0


def _pull(store: Any, args: argparse.Namespace) -> int:
    from relgate_tui.engine.review.db import ReviewDenied
    from relgate_tui.engine.review.pull import pull_into_run
    from relgate_tui.engine.review.schema import ADJUDICATOR_ROLE
    from relgate_tui.engine.review.status import session_state
    from relgate_tui.engine.review.summary import misses_line

    try:
        state = session_state(store, args.session, args.policy, need_all=True)
    except ReviewDenied:  # issue 31 item 11: say what was refused (pulling), not the adjudicator queue
        raise ReviewDenied("pulling the final labels needs every reviewer's label: connect as the role that ran "
                           f"`relgate review init` or a member of {ADJUDICATOR_ROLE} (a reviewer reads only the items "
                           "it labelled)") from None
    from relgate_tui.engine.certification.result import RunResult

    path, written, doc = pull_into_run(state, runs_root=args.run_dir)
    store.mark_pulled(state.info.id)  # from now on no label of the session is withdrawn
    r = RunResult.from_json(doc)
    for line in state.left_out:
        _say(line)
    _say(f"pulled {len(state.finalised.final)} final labels into run {path.name} ({written} changed)")
    _say(misses_line(dict(r.review or {})))
    rl, lb = r.reliability_level, r.reliability_lower_bound
    _say(f"reliability level {'—' if rl is None else f'{rl:.1%}'}"
         + ("" if lb is None else f" (≥ {lb:.1%}: {r.bound_name})")
         + f", M* = {'∞' if r.m_star is None else r.m_star}"
         + ("" if r.gate is None else f"; gate: {r.gate.summary()}"))
    if r.fixed_n_line:
        _say(r.fixed_n_line)
    return 0


_COMMANDS = {"grant": _grant, "publish": _publish, "open": _open, "label": _label, "status": _status,
             "adjudicate": _adjudicate, "pull": _pull}
