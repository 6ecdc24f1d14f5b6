"""Team-review labelling: the item the queue handed this reviewer, one key per decision (the spot-check's keys).

``y`` accept the highlighted candidate, ``n`` reject it and show the next (the last one: none acceptable), ``x``
none acceptable, ``s`` skip, ``u`` undo (the last rejection on this item, else this reviewer's last label — the item
comes back), ``e`` the candidates' sample texts, Escape leave (every label is journaled; a claim not labelled returns
to the queue when its lease ends).

Every key goes to the reviewer's journal first (:class:`~relgate_tui.engine.review.client.Reviewer`). When the
database cannot be reached the screen says "database unreachable: N labels waiting", keeps taking the keys of the
item in hand, retries every second, and says so when the journal has been sent. Labelling is blind: the payload
holds no verdict, and nothing here reads another reviewer's label.

Every database call runs in a thread worker (:mod:`.dbwork`): the screen says "saving…" / "connecting…" and keeps
taking keys (a decision key while a call is pending gets a notice; the label already given is in the journal).
Escape asks first, like the spot-check, while an item is in hand or labels wait.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Header, Label, Static

from relgate_tui.core.review.verdicts import verdict_code
from relgate_tui.core.text import one_line
from relgate_tui.engine.certification.views import ItemView
from relgate_tui.engine.review.client import Reviewer, Sent
from relgate_tui.engine.review.db import ReviewUnreachable
from relgate_tui.engine.review.store import Claim
from relgate_tui.engine.review.summary import counted
from relgate_tui.tui.review.dbwork import StoreCalls
from relgate_tui.tui.services import host
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.safetext import clean, safe

RETRY_SECONDS = 1.0


class ReviewLabelScreen(StoreCalls, Screen[str]):
    CSS_PATH = "review.tcss"
    AUTO_FOCUS = ""
    BINDINGS = [
        Binding("y", "accept", "Yes", id="review.yes", tooltip="Accept the highlighted candidate"),
        Binding("n", "reject", "No→next", id="review.no", tooltip="Reject it, show the next candidate"),
        Binding("x", "none", "None", id="review.none", tooltip="No candidate is acceptable (score ∞)"),
        Binding("s", "skip", "Skip", id="review.skip", tooltip="Skip this item"),
        Binding("u", "undo", "Undo", id="review.undo", tooltip="Undo the last rejection or your last label"),
        Binding("e", "samples", "Samples", id="review.samples", tooltip="The candidates' sample texts"),
        Binding("r", "retry", "Retry", id="review.retry", tooltip="Send the waiting labels now"),
        Binding("escape", "leave", "Leave", id="review.leave", tooltip="Leave: every label is journaled"),
    ]
    HELP = ("Is the highlighted candidate an acceptable answer? y = yes, n = no (next candidate), x = none of them, "
            "s = skip. Each key is journaled on this machine before it is sent; when the database is unreachable "
            "the keys wait in the journal and go out, in order, when it is back.")
    HELP_TITLE = "Team review"

    def __init__(self, reviewer: Reviewer) -> None:
        super().__init__()
        self.reviewer = reviewer
        self.claim: Claim | None = None
        self.view: ItemView | None = None  # the claimed item, typed (engine/review/item.py)
        self.cursor = 0
        self.labelled = 0
        self.message = ""
        self.unreachable = ""
        self._retry: Timer | None = None
        self._skipped: set[str] = set()

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="review-main"):
            with Vertical(id="review-left"):
                yield Label("", id="review-title")
                with VerticalScroll(id="review-question-box"):
                    yield Static("", id="review-question")
                yield Static("", id="review-candidates")
                yield Static("", id="review-prompt")
            with Vertical(id="review-right"):
                yield Label("Session", classes="panel-title")
                yield Static("", id="review-progress")
                yield Static("", id="review-db")
                yield Static("", id="review-last")
        yield StockFooter()

    def on_mount(self) -> None:
        s = self.reviewer.session
        self.sub_title = f"team review · {s.name} · {self.reviewer.name}"
        for problem in self.reviewer.journal.problems:  # malformed journal lines set aside, as the CLI says (issue 29)
            self.notify(one_line(problem), title="Journal", severity="warning", timeout=15, markup=False)
        self._send_then_next("connecting…")

    # ------------------------------------------------------------------------------------------------ state
    def _fetch_next(self) -> tuple[Claim | None, str]:
        """(the next claim, "") or (None, why the database is unreachable) — in the worker."""
        try:
            return self.reviewer.next_item(self._skipped), ""
        except ReviewUnreachable as exc:
            return None, str(exc)

    def _take(self, got: tuple[Claim | None, str]) -> None:
        """The worker's next claim, on the UI thread."""
        claim, why = got
        if why:
            self._unreachable(why)
            return
        self._hold(claim)

    def _hold(self, claim: Claim | None) -> None:
        self.claim = claim
        self.view = claim.item if claim is not None else None
        self.cursor = 0
        if claim is None:
            self.message = "nothing left for you in this session"

    def _send_then_next(self, what: str) -> None:
        """Send the journal; then, when the database answered and no item is in hand, claim the next one."""
        want_next = self.claim is None

        def job() -> tuple[Sent, tuple[Claim | None, str] | None]:
            sent = self.reviewer.flush()
            return sent, (self._fetch_next() if not sent.unreachable and want_next else None)

        def done(got: tuple[Sent, tuple[Claim | None, str] | None]) -> None:
            sent, nxt = got
            self._after(sent)
            if nxt is not None:
                self._take(nxt)

        self.store_call(what, job, done)

    def show_busy(self) -> None:
        if self.is_mounted:
            self._show()

    def _after(self, sent: Sent) -> None:
        for why in sent.rejected:
            self.notify(one_line(why), severity="warning", markup=False)
        if sent.unreachable:
            self._unreachable(sent.unreachable)
        elif self.unreachable:
            self.unreachable = ""
            self.message = "database back: every waiting label was sent"
            if self._retry is not None:
                self._retry.stop()
                self._retry = None

    def _unreachable(self, why: str) -> None:
        self.unreachable = why
        if self._retry is None:
            self._retry = self.set_interval(RETRY_SECONDS, self.action_retry)

    def action_retry(self) -> None:
        """Send the journal again (``r``, and every second while the database is unreachable)."""
        if self.busy:
            return  # a call is pending: the timer comes back
        self._send_then_next("sending…")

    # ---------------------------------------------------------------------------------------------- render
    def _show(self) -> None:
        c, v = self.claim, self.view
        title = Text()
        if c is None or v is None:
            title.append("No item in hand", style="bold")
            self.query_one("#review-question", Static).update(Text(self.message or "…", style="italic"))
            self.query_one("#review-candidates", Static).update("")
            self.query_one("#review-prompt", Static).update("")
        else:
            title.append(f"Item {c.position + 1} of {self.reviewer.session.n_items}", style="bold")
            title.append("  ").append("id " + one_line(c.item_id), style="dim")
            q = safe(v.question)
            for i, choice in enumerate(v.choices):
                q.append(f"\n{chr(65 + i)}. ", style="bold").append(clean(choice))
            if v.references:
                q.append("\n\nReference from the task file: ", style="dim")
                q.append(clean(" | ".join(v.references)), style="italic")
            self.query_one("#review-question", Static).update(q)
            self.query_one("#review-candidates", Static).update(self._candidates(v))
            self.query_one("#review-prompt", Static).update(self._prompt(v))
        self.query_one("#review-title", Label).update(title)
        prog = Text()
        prog.append(f"{self.labelled}", style="bold").append(" labelled here\n")
        prog.append(f"{self.reviewer.session.per_item} reviewers per item\n", style="dim")
        self.query_one("#review-progress", Static).update(prog)
        db = Text()
        if self.busy:
            db.append(self.busy, style="bold yellow")
            if self.unreachable:
                db.append(f"\n{counted(self.reviewer.waiting, 'label')} waiting in the journal", style="dim")
        elif self.unreachable:
            db.append(f"database unreachable: {counted(self.reviewer.waiting, 'label')} waiting", style="bold red")
            db.append("\nkept in the journal on this machine; retrying every second", style="dim")
        else:
            db.append("connected", style="green")
        self.query_one("#review-db", Static).update(db)
        self.query_one("#review-last", Static).update(Text(self.message, style="dim"))

    def _candidates(self, v: ItemView) -> Table:
        table = Table(box=None, expand=True, show_edge=False, pad_edge=False)
        for name, kw in (("", {"width": 2}), ("rank", {"justify": "right", "width": 4}),
                         ("answer", {"ratio": 3, "overflow": "fold"}), ("count", {"justify": "right", "width": 7})):
            table.add_column(name, **kw)  # type: ignore[arg-type]
        for i, c in enumerate(v.candidates):
            here, rejected = i == self.cursor, i < self.cursor
            style = "strike dim" if rejected else ("bold reverse" if here else "")
            table.add_row("▶" if here else ("✗" if rejected else ""), str(c.rank),
                          safe(c.answer, style=style), f"{c.count}/{v.n_samples}")
        if not v.candidates:
            table.add_row("", "", Text("no valid answer was sampled", style="italic"), "")
        return table

    def _prompt(self, v: ItemView) -> Text:
        cands = v.candidates
        t = Text()
        if cands and self.cursor < len(cands):
            t.append("Is ", style="bold")
            t.append(f"candidate {cands[self.cursor].rank}  {clean(cands[self.cursor].answer)}",
                     style="bold reverse")
            t.append(" an acceptable answer?   y yes   n no   x none   s skip", style="bold")
        else:
            t.append("No candidate to check: x none acceptable or s skip", style="bold")
        return t

    # ---------------------------------------------------------------------------------------------- actions
    def _record(self, code: str, what: str) -> None:
        c = self.claim
        if self.busy:
            self.notify(f"{self.busy} — one moment", severity="warning", timeout=2)
            return
        if c is None:
            self.notify(self.message or "no item in hand", severity="warning", markup=False)
            return
        # journaled before it is sent; the next item is claimed in the label's transaction (_fetch_next hands it out)
        self.labelled += 1
        self._hold(None)
        self.message = f"saving: {c.item_id} → {what}"

        def job() -> tuple[Sent, tuple[Claim | None, str] | None]:
            sent = self.reviewer.label(c.item_id, code, claim_next=True, exclude=self._skipped)
            return sent, (self._fetch_next() if not sent.unreachable else None)

        def done(got: tuple[Sent, tuple[Claim | None, str] | None]) -> None:
            sent, nxt = got
            self.message = f"saved: {c.item_id} → {what}"
            self._after(sent)
            if nxt is not None:
                self._take(nxt)

        self.store_call("saving…", job, done)

    def action_accept(self) -> None:
        cands = self.view.candidates if self.view is not None else ()
        if not cands:
            self.notify("no candidate to accept: x = none acceptable, s = skip", severity="warning")
            return
        rank = cands[self.cursor].rank
        self._record(verdict_code(rank=rank), f"rank {rank}")

    def action_reject(self) -> None:
        c, v = self.claim, self.view
        if c is None or v is None:
            return
        if self.cursor + 1 < len(v.candidates):
            self.cursor += 1
            self._show()
            return
        self._record(verdict_code(none=True), "none acceptable (all candidates rejected)")

    def action_none(self) -> None:
        self._record(verdict_code(none=True), "none acceptable")

    def action_skip(self) -> None:
        self._record(verdict_code(skip=True), "skipped")

    def action_undo(self) -> None:
        if self.cursor > 0:
            self.cursor -= 1
            self._show()
            return
        held = self.claim

        def job() -> tuple[str | None, Sent, tuple[Claim | None, str] | None]:
            item, sent = self.reviewer.undo()
            if item is None or sent.unreachable:
                return item, sent, None
            if held is not None and held.item_id != item:
                self.reviewer.store.release(self.reviewer.session.id, held.item_id, self.reviewer.name)
            return item, sent, self._fetch_next()

        def done(got: tuple[str | None, Sent, tuple[Claim | None, str] | None]) -> None:
            item, sent, nxt = got
            self._after(sent)
            if item is None:
                if not sent.rejected:  # a refusal was said by _after
                    self.notify("nothing to undo", severity="warning")
                return
            self.labelled = max(0, self.labelled - 1)
            self.message = f"undone: {item} is back"
            if nxt is not None:
                self._take(nxt)

        self.store_call("undoing…", job, done)

    def action_samples(self) -> None:
        if self.view is not None:
            host(self.app).open_screen("item_samples", self.view)

    def action_leave(self) -> None:
        """Leave; while an item is in hand or labels wait, ask first (as the spot-check does)."""
        waiting = self.reviewer.waiting
        if self.claim is None and not waiting and not self.busy:
            self._leave()
            return

        def answer(ok: bool | None) -> None:
            if ok:
                self._leave()

        held = ("The item in hand returns to the queue when its lease ends. " if self.claim is not None else "")
        wait = (f"{waiting} label{'s' if waiting != 1 else ''} wait in the journal on this machine and go out the "
                "next time you open this session. " if waiting else "")
        host(self.app).confirm("Leave team review?", answer,
                               f"Every label you gave is journaled. {held}{wait}".strip(), yes="Leave", no="Stay")

    def _leave(self) -> None:
        if self._retry is not None:
            self._retry.stop()
        self.dismiss("left")
