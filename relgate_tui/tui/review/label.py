"""Team-review labelling: the item the queue handed this reviewer, one key per decision (the spot-check's keys).

``y`` accept the highlighted candidate, ``n`` reject it and show the next (the last one: none acceptable), ``x``
none acceptable, ``s`` skip, ``u`` undo (the last rejection on this item, else this reviewer's last label — the item
comes back), ``e`` the candidates' sample texts, Escape leave (every label is journaled; a claim not labelled returns
to the queue when its lease ends).

Every key goes to the reviewer's journal first (:class:`~relgate_tui.engine.review.client.Reviewer`). When the
database cannot be reached the screen says "database unreachable: N labels waiting", keeps taking the keys of the
item in hand, retries every second, and says so when the journal has been sent. Labelling is blind: the payload
holds no verdict, and nothing here reads another reviewer's label.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Label, Static

from relgate_tui.core.review.verdicts import verdict_code
from relgate_tui.core.text import one_line
from relgate_tui.engine.review.client import Reviewer, Sent
from relgate_tui.engine.review.db import ReviewError, ReviewUnreachable
from relgate_tui.engine.review.store import Claim
from relgate_tui.tui.services import host
from relgate_tui.tui.widgets.safetext import clean, safe

RETRY_SECONDS = 1.0


def item_view(claim: Claim) -> Any:
    """The spot-check's :class:`~relgate_tui.engine.certification.views.ItemView` of a claimed item's payload (for ``e``)."""
    from relgate_tui.engine.certification.views import Candidate, ItemView

    p = claim.payload
    cands = []
    for c in p.get("candidates") or []:
        try:
            cands.append(Candidate(int(c["rank"]), str(c["answer"]), int(c["count"]), float(c["share"]),
                                   str(c.get("example", ""))))
        except (KeyError, TypeError, ValueError):
            continue
    return ItemView(item_id=claim.item_id, role="calibration", question=str(p.get("question", "")),
                    choices=tuple(str(c) for c in p.get("choices") or ()), candidates=tuple(cands),
                    n_invalid=int(p.get("n_invalid", 0) or 0), n_samples=int(p.get("n_samples", 0) or 0),
                    references=tuple(str(r) for r in p.get("references") or ()),
                    samples=tuple((c.example, c.answer) for c in cands), tie_broken=bool(p.get("tie_broken")))


class ReviewLabelScreen(Screen[str]):
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
        yield Footer()

    def on_mount(self) -> None:
        s = self.reviewer.session
        self.sub_title = f"team review · {s.name} · {self.reviewer.name}"
        self._after(self.reviewer.flush())
        if not self.unreachable:
            self._next()
        self._show()

    # ------------------------------------------------------------------------------------------------ state
    def _next(self) -> None:
        try:
            self.claim = self.reviewer.next_item(self._skipped)
        except ReviewUnreachable as exc:
            self._unreachable(str(exc))
            return
        self.cursor = 0
        if self.claim is None:
            self.message = "nothing left for you in this session"

    def _after(self, sent: Sent) -> None:
        for why in sent.rejected:
            self.notify(one_line(why), severity="warning")
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
        self._after(self.reviewer.flush())
        if not self.unreachable and self.claim is None:
            self._next()
        self._show()

    # ---------------------------------------------------------------------------------------------- render
    def _show(self) -> None:
        c = self.claim
        title = Text()
        if c is None:
            title.append("No item in hand", style="bold")
            self.query_one("#review-question", Static).update(Text(self.message or "…", style="italic"))
            self.query_one("#review-candidates", Static).update("")
            self.query_one("#review-prompt", Static).update("")
        else:
            p = c.payload
            title.append(f"Item {c.position + 1} of {self.reviewer.session.n_items}", style="bold")
            title.append("  ").append("id " + one_line(c.item_id), style="dim")
            q = safe(p.get("question", ""))
            for i, choice in enumerate(p.get("choices") or []):
                q.append(f"\n{chr(65 + i)}. ", style="bold").append(clean(choice))
            if p.get("references"):
                q.append("\n\nReference from the task file: ", style="dim")
                q.append(clean(" | ".join(str(r) for r in p["references"])), style="italic")
            self.query_one("#review-question", Static).update(q)
            self.query_one("#review-candidates", Static).update(self._candidates(p))
            self.query_one("#review-prompt", Static).update(self._prompt(p))
        self.query_one("#review-title", Label).update(title)
        prog = Text()
        prog.append(f"{self.labelled}", style="bold").append(" labelled here\n")
        prog.append(f"{self.reviewer.session.per_item} reviewers per item\n", style="dim")
        self.query_one("#review-progress", Static).update(prog)
        db = Text()
        if self.unreachable:
            db.append(f"database unreachable: {self.reviewer.waiting} labels waiting", style="bold red")
            db.append("\nkept in the journal on this machine; retrying every second", style="dim")
        else:
            db.append("connected", style="green")
        self.query_one("#review-db", Static).update(db)
        self.query_one("#review-last", Static).update(Text(self.message, style="dim"))

    @staticmethod
    def _cands(p: dict[str, Any] | Any) -> list[dict[str, Any]]:
        return [c for c in p.get("candidates") or [] if isinstance(c, dict)]

    def _candidates(self, p: Any) -> Table:
        table = Table(box=None, expand=True, show_edge=False, pad_edge=False)
        for name, kw in (("", {"width": 2}), ("rank", {"justify": "right", "width": 4}),
                         ("answer", {"ratio": 3, "overflow": "fold"}), ("count", {"justify": "right", "width": 7})):
            table.add_column(name, **kw)  # type: ignore[arg-type]
        for i, c in enumerate(self._cands(p)):
            here, rejected = i == self.cursor, i < self.cursor
            style = "strike dim" if rejected else ("bold reverse" if here else "")
            table.add_row("▶" if here else ("✗" if rejected else ""), str(c.get("rank", "?")),
                          safe(c.get("answer", ""), style=style), f"{c.get('count', 0)}/{p.get('n_samples', 0)}")
        if not self._cands(p):
            table.add_row("", "", Text("no valid answer was sampled", style="italic"), "")
        return table

    def _prompt(self, p: Any) -> Text:
        cands = self._cands(p)
        t = Text()
        if cands and self.cursor < len(cands):
            t.append("Is ", style="bold")
            t.append(f"candidate {cands[self.cursor].get('rank')}  {clean(cands[self.cursor].get('answer', ''))}",
                     style="bold reverse")
            t.append(" an acceptable answer?   y yes   n no   x none   s skip", style="bold")
        else:
            t.append("No candidate to check: x none acceptable or s skip", style="bold")
        return t

    # ---------------------------------------------------------------------------------------------- actions
    def _record(self, code: str, what: str) -> None:
        c = self.claim
        if c is None:
            self.notify(self.message or "no item in hand", severity="warning")
            return
        # journaled before it is sent; the next item is claimed in the label's transaction (_next hands it out)
        sent = self.reviewer.label(c.item_id, code, claim_next=True, exclude=self._skipped)
        self.labelled += 1
        self.claim = None
        self.message = f"saved: {c.item_id} → {what}"
        self._after(sent)
        if not self.unreachable:
            self._next()
        self._show()

    def action_accept(self) -> None:
        c = self.claim
        cands = self._cands(c.payload) if c else []
        if not cands:
            self.notify("no candidate to accept: x = none acceptable, s = skip", severity="warning")
            return
        rank = int(cands[self.cursor].get("rank", self.cursor + 1))
        self._record(verdict_code(rank=rank), f"rank {rank}")

    def action_reject(self) -> None:
        c = self.claim
        if c is None:
            return
        if self.cursor + 1 < len(self._cands(c.payload)):
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
        try:
            item, sent = self.reviewer.undo()
        except ReviewError as exc:
            self.notify(one_line(str(exc)), severity="error")
            return
        self._after(sent)
        if item is None:
            self.notify("nothing to undo", severity="warning")
            return
        self.labelled = max(0, self.labelled - 1)
        self.message = f"undone: {item} is back"
        if not self.unreachable:
            if self.claim is not None and self.claim.item_id != item:
                self.reviewer.store.release(self.reviewer.session.id, self.claim.item_id, self.reviewer.name)
            self._next()
        self._show()

    def action_samples(self) -> None:
        if self.claim is not None:
            host(self.app).open_screen("item_samples", item_view(self.claim))

    def action_leave(self) -> None:
        if self._retry is not None:
            self._retry.stop()
        self.dismiss("left")
