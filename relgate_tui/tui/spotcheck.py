"""Spot-check (SPEC §5.3): one calibration item at a time, one key per decision.

Keys: ``y`` accept the highlighted candidate (score = its rank), ``n`` reject it and move to the next candidate
(rejecting the last one records "none acceptable"), ``x`` none acceptable (score ∞), ``s`` skip (counted and
reported), ``u`` undo (the last rejection on this item, else the last recorded label — it comes back on screen),
``e`` the raw samples, ``j`` reveal the verification judge's verdict on the item just labelled (issue 22: never on
the item on screen — the label is blind to it), ``?`` help, Escape leave (every label is already saved; resume later
from Runs). In audit mode a key that contradicts the reference verdict (``y`` on a candidate it does not match, ``n``
on the one it matches, ``x`` when one matches) asks once — the same key again keeps it (stored as overriding the
reference), Escape takes it back — and the item's later keys do not ask again. The progress panel shows the run's own gate decision (the one Results shows: on the judge-assisted bound
for an assisted gate) and one plan line on the same basis: ≈ how many more labels clear it, or that more will not.

Every label goes through ``session.label`` — written and fsync-ed by the run store — *before* the screen shows the
next item. Dismisses with "done" (nothing left to verify) or "left" (Escape).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Label, Static

from relgate_tui.core.text import one_line
from relgate_tui.engine.certification.run_gate import live_gate
from relgate_tui.tui.itemsamples import item_view_or_notice
from relgate_tui.tui.services import host
from relgate_tui.tui.widgets.footer import KeysFooter
from relgate_tui.tui.widgets.safetext import clean, safe

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.engine.certification.views import ItemView, SpotProgress


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


class SpotCheckScreen(Screen[str]):
    CSS_PATH = "spotcheck.tcss"
    AUTO_FOCUS = ""
    BINDINGS = [
        Binding("y", "accept", "Yes", id="spot.yes", tooltip="Accept the highlighted candidate (score = its rank)"),
        Binding("n", "reject", "No", id="spot.no", tooltip="Reject it, show the next candidate"),
        Binding("x", "none", "None", id="spot.none", tooltip="No candidate is acceptable (score ∞, always counted)"),
        Binding("s", "skip", "Skip", id="spot.skip", tooltip="Skip this item (excluded from n, reported)"),
        Binding("u", "undo", "Undo", id="spot.undo", tooltip="Undo the last rejection or the last label"),
        Binding("e", "samples", "Samples", id="spot.samples", tooltip="Show the item's raw samples"),
        Binding("j", "reveal", "Judge", id="spot.reveal",
                tooltip="Reveal the verification judge's verdict on the item you just labelled"),
        Binding("escape", "leave", "Leave", id="spot.leave", tooltip="Leave: labels are saved, resume any time"),
    ]
    HELP = (
        "Is the highlighted candidate an acceptable answer to the question? y = yes, n = no (next candidate), "
        "x = none of them, s = skip. Every key is saved to disk before the next item appears; u undoes. In audit "
        "mode a key that contradicts the reference asks once: the same key again keeps it, Esc takes it back."
    )
    HELP_TITLE = "Spot-check"

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.queue: deque[str] = deque(session.pending_items())
        self.cursor = 0  # index of the highlighted candidate of the current item
        self.view: ItemView | None = None
        self.last_message = ""
        self.last_labelled: str | None = None  # the one item whose judge verdict ``j`` may reveal
        self.confirming: tuple[str, str, int, str] | None = None  # (key, item, cursor, why) awaiting the same key
        self._overridden: str | None = None  # the item whose contradiction was confirmed: not asked twice

    # ---------------------------------------------------------------------------------------------- compose
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="spot-main"):
            with Vertical(id="spot-left"):
                yield Label("", id="item-title")
                with VerticalScroll(id="question-box"):
                    yield Static("", id="question")
                yield Static("", id="candidates")
                yield Static("", id="prompt")
            # the last message first (``j``'s verdict, "saved: … ≠ automatic verdict"): on screen at any size; the
            # panel scrolls when the judge-assisted block makes it taller than the window
            with VerticalScroll(id="spot-right"):
                yield Static("", id="last")
                yield Label("Progress", classes="panel-title")
                yield Static("", id="progress")
                yield Label("Keys", classes="panel-title", id="keys-title")
                yield Static(self._keys_text(), id="keys")
        yield KeysFooter()

    @staticmethod
    def _keys_text() -> Text:
        t = Text()
        for key, desc in (
            ("y", "accept highlighted"),
            ("n", "reject → next"),
            ("x", "none acceptable (∞)"),
            ("s", "skip (reported)"),
            ("u", "undo"),
            ("e", "raw samples"),
            ("j", "judge's verdict (last item)"),
            ("?", "all keys"),
            ("Esc", "leave (saved)"),
        ):
            t.append(f"{key:>4}  ", style="bold")
            t.append(desc + "\n")
        return t

    def on_mount(self) -> None:
        self.sub_title = f"spot-check · {self.session.title}"
        self._show_current()

    # ------------------------------------------------------------------------------------------------ state
    @property
    def current(self) -> str | None:
        return self.queue[0] if self.queue else None

    def _show_current(self) -> None:
        item = self.current
        if item is None:
            self.view = None
            self.dismiss("done")
            return
        self.view = item_view_or_notice(self, self.session, item)
        if self.view is None:  # the run's files broke under it: the notice says why; labels so far are kept
            self.dismiss("left")
            return
        self.cursor = min(self.cursor, max(0, len(self.view.candidates) - 1))
        self._render_item()
        self._render_progress()

    def _render_item(self) -> None:
        v = self.view
        if v is None:
            return
        prog = self.session.spot_progress()
        title = Text()
        title.append(f"Item {prog.done + 1} of {prog.total}", style="bold")
        title.append("  ").append("id " + one_line(v.item_id), style="dim")  # untrusted: never markup
        if v.audit:
            title.append("  ").append(" AUDIT ", style="reverse")
        self.query_one("#item-title", Label).update(title)
        q = safe(v.question)
        if v.choices:
            q.append("\n")
            for i, choice in enumerate(v.choices):
                q.append(f"\n{chr(65 + i)}. ", style="bold")
                q.append(clean(choice))
        if v.references and not v.audit:
            q.append("\n\nReference from the task file: ", style="dim")
            q.append(clean(" | ".join(v.references)), style="italic")
        if v.audit and v.references:
            q.append("\n\nReference: ", style="dim")
            q.append(clean(" | ".join(v.references)), style="italic")
            auto = v.auto_score
            verdict = (
                "no candidate matches it (score ∞)"
                if auto is None or auto == float("inf")
                else f"candidate {int(auto)} matches it"
            )
            q.append(f"  (automatic verdict: {verdict})", style="dim")
        self.query_one("#question", Static).update(q)
        self.query_one("#candidates", Static).update(self._candidates_table(v))
        self.query_one("#prompt", Static).update(self._prompt_text(v))

    def _candidates_table(self, v: ItemView) -> Table:
        table = Table(box=None, expand=True, show_edge=False, pad_edge=False)
        table.add_column("", width=2)
        table.add_column("rank", justify="right", width=4)
        table.add_column("answer", ratio=3, overflow="fold")
        table.add_column("count", justify="right", width=7)
        table.add_column("", ratio=1, overflow="crop", no_wrap=True)
        for i, c in enumerate(v.candidates):
            rejected = i < self.cursor
            here = i == self.cursor
            style = "strike dim" if rejected else ("bold reverse" if here else "")
            bar = "█" * max(1, round(c.share * 20)) if c.count else ""
            table.add_row(
                "▶" if here else ("✗" if rejected else ""),
                str(c.rank),
                safe(c.answer, style=style),
                f"{c.count}/{v.n_samples}",
                Text(bar, style="cyan"),
            )
        if not v.candidates:
            table.add_row("", "", Text("no valid answer was sampled", style="italic"), "", "")
        invalid = Text(f"INVALID (unparseable): {v.n_invalid}/{v.n_samples}", style="dim")
        if v.tie_broken:
            invalid.append("   ranks of equal counts drawn at random (seeded)", style="dim italic")
        outer = Table.grid(expand=True)
        outer.add_row(Text("Candidates, most frequent first", style="bold"))
        outer.add_row(table)
        outer.add_row(invalid)
        return outer

    def _prompt_text(self, v: ItemView) -> Text:
        t = Text()
        if self.confirming is not None:
            key, _item, _cursor, why = self.confirming
            t.append(one_line(why), style="bold yellow")
            t.append(":  press ", style="bold")
            t.append(key, style="bold reverse")
            t.append(" again to keep it, ", style="bold")
            t.append("Esc", style="bold reverse")
            t.append(" to take it back", style="bold")
            return t
        if v.candidates and self.cursor < len(v.candidates):
            c = v.candidates[self.cursor]
            t.append("Is ", style="bold")
            t.append(f"candidate {c.rank}  {clean(c.answer)}", style="bold reverse")
            t.append(" an acceptable answer?   ", style="bold")
            t.append("y", style="bold green")
            t.append(" yes   ")
            t.append("n", style="bold red")
            t.append(" no, next   " if self.cursor + 1 < len(v.candidates) else " no (= none acceptable)   ")
            t.append("x", style="bold")
            t.append(" none   ")
            t.append("s", style="bold")
            t.append(" skip")
        else:
            t.append("No candidate to check: ", style="bold")
            t.append("x", style="bold")
            t.append(" none acceptable (score ∞) or ")
            t.append("s", style="bold")
            t.append(" skip")
        return t

    def _render_progress(self) -> None:
        """The live panel (issue 37 §4): the level so far, then the run's gate decision — the one Results shows, on
        the run's own gate and its bound — and one plan line on the same basis, never two readings that disagree."""
        gate = self.session.gate
        p: SpotProgress = self.session.spot_progress(confidence=gate.confidence)
        decision, plan = live_gate(self.session)
        t = Text()
        t.append(f"{p.done}", style="bold")
        if p.skipped:  # a skip is one of the items done, never one of the verified ones
            t.append(f" of {p.total} done here: {p.done - p.skipped} verified, {p.skipped} skipped")
        else:
            t.append(f" of {p.total} verified here")
        t.append("\n\nReliability so far\n", style="dim")
        t.append(_pct(p.reliability_level), style="bold")
        t.append(f"  (n = {p.n}: {p.by_hand} by you, {p.automatic} by reference)\n")
        if decision is not None and decision.value is not None:
            t.append(f"≥ {_pct(decision.value)}", style="bold")
            t.append(f" {decision.basis_label}\n")
        assisted = self.session.assisted(gate.confidence, gate.threshold)
        if assisted is not None and assisted.prefix.left_out:
            t.append(one_line(assisted.prefix.note or "") + "\n", style="yellow")
        if decision is None:
            t.append("no gate for this run (set one in Setup for the next run)\n", style="dim")
        else:  # the gate as Results, the report and the JSON decide it (the one gate rule)
            t.append(f"\ngate {decision.threshold:.0%}: ", style="dim")
            style = "yellow" if decision.passed is None else ("bold green" if decision.passed else "bold red")
            t.append(one_line(decision.summary()) + "\n", style=style)
            if plan is not None:
                t.append(one_line(plan) + "\n", style="green" if decision.passed else "yellow")
        if p.audited:
            t.append(f"\nAudit: {p.audited} checked, ", style="dim")
            t.append(f"{p.disagreements} disagreement{'s' if p.disagreements != 1 else ''}",
                     style="bold red" if p.disagreements else "green")
            t.append("\n")
        self.query_one("#progress", Static).update(t)
        last = self.query_one("#last", Static)
        last.update(Text(self.last_message, style="bold"))
        last.display = bool(self.last_message)

    # ---------------------------------------------------------------------------------------------- actions
    def _confirmed(self, key: str, *, accept: int | None = None, reject: int | None = None,
                   none: bool = False) -> bool:
        """True when ``key`` may act now; False when it contradicts the audited item's reference and was not yet
        confirmed — it then asks (the same key again keeps it, Escape takes it back)."""
        v, item = self.view, self.current
        if v is None or item is None:
            return False
        pending, self.confirming = self.confirming, None
        if pending is not None and pending[:3] == (key, item, self.cursor):
            self._overridden = item
            return True
        why = v.contradiction(accept=accept, reject=reject, none=none)
        if why is None or self._overridden == item:
            if pending is not None:
                self._render_item()
            return True
        self.confirming = (key, item, self.cursor, why)
        self._render_item()
        return False

    def _record(self, *, rank: int | None = None, none: bool = False, skip: bool = False, what: str) -> None:
        item = self.current
        if item is None:
            return
        outcome = self.session.label(item, rank=rank, none=none, skip=skip)  # persisted (fsync) before we move on
        self.last_labelled = item
        self.queue.popleft()
        self.cursor = 0
        self.confirming = self._overridden = None
        self.last_message = f"saved: {item} → {what}"
        if outcome.disagrees:
            self.last_message += "  ≠ automatic verdict (override saved)"
            self.notify(f"{item}: your verdict differs from the automatic one", severity="warning")
        self._show_current()

    def action_accept(self) -> None:
        v = self.view
        if v is None or not v.candidates:
            self.notify("no candidate to accept: x = none acceptable, s = skip", severity="warning")
            return
        c = v.candidates[self.cursor]
        if self._confirmed("y", accept=c.rank):
            self._record(rank=c.rank, what=f"rank {c.rank} ({c.answer})")

    def action_reject(self) -> None:
        v = self.view
        if v is None:
            return
        last = self.cursor + 1 >= len(v.candidates)
        here = v.candidates[self.cursor].rank if v.candidates else None
        if not self._confirmed("n", reject=here, none=last and here is None):
            return
        if not last:
            self.cursor += 1
            self._render_item()
            return
        self._record(none=True, what="none acceptable (all candidates rejected)")

    def action_none(self) -> None:
        if self.view is not None and self._confirmed("x", none=True):
            self._record(none=True, what="none acceptable")

    def action_skip(self) -> None:
        if self.view is not None and self._confirmed("s"):
            self._record(skip=True, what="skipped")

    def action_undo(self) -> None:
        if self.confirming is not None:  # u while asked: takes the key back, as Escape does
            self._cancel_confirmation()
            return
        self._overridden = None
        if self.cursor > 0:
            self.cursor -= 1
            self._render_item()
            return
        item = self.session.undo()
        if item is None:
            self.notify("nothing to undo", severity="warning")
            return
        if item == self.last_labelled:  # back on screen: its judge verdict is hidden again (blind label)
            self.last_labelled = None
        if item in self.queue:
            self.queue.remove(item)
        self.queue.appendleft(item)
        self.cursor = 0
        self.last_message = f"undone: {item} is back"
        self._show_current()

    def action_reveal(self) -> None:
        item = self.last_labelled
        if item is None:
            self.notify("label an item first: the judge's verdict is shown only after your own", severity="warning")
            return
        verdict = self.session.verify_verdict(item)
        if verdict is None:
            self.notify(self._no_verdict_reason(), severity="warning")
            return
        words = {"ok": "correct" if verdict.f else "wrong", "unparseable": "unparseable reply (counted as wrong)",
                 "failed": "request failed (counted as wrong)", "no_answer": "no valid top answer"}[verdict.status]
        p_yes = "" if verdict.p_yes is None else f", P(yes) {verdict.p_yes:.0%}"
        self.last_message = f"judge on {one_line(item)}: {words}{p_yes}"
        self._render_progress()

    def _no_verdict_reason(self) -> str:
        """Why ``j`` has nothing to show (issue 31 item 1): never a silent dead end."""
        if self.session.prepared.config.verify_judge_model is None:
            from relgate_tui.engine.certification.assisted import no_verification_judge

            return no_verification_judge(self.session.imported_tool)
        if self.session.store.read_verify_verdicts() is None:
            return "the verification judge has not been asked yet: it runs after sampling (resume the run)"
        return ("the verification judge was not asked about this item: it verifies items without a reference "
                "answer only — start the run again in Setup with verification \"by hand, even where references "
                "exist\" to have it check every calibration item")

    def action_samples(self) -> None:
        if self.view is not None:
            host(self.app).open_screen("item_samples", self.view)

    def _cancel_confirmation(self) -> None:
        self.confirming = None
        self.last_message = "taken back: nothing saved"
        self._render_item()
        self._render_progress()

    def action_leave(self) -> None:
        if self.confirming is not None:  # Escape while asked: takes the contradicting key back
            self._cancel_confirmation()
            return
        left = len(self.queue)
        if not left:
            self.dismiss("done")
            return

        def answer(ok: bool | None) -> None:
            if ok:
                self.dismiss("left")

        host(self.app).confirm(
            "Leave the spot-check?",
            answer,
            f"Every label so far is saved. {left} item{'s' if left != 1 else ''} still need a verdict; "
            "results use the verified items only, and Runs → resume continues here.",
            yes="Leave",
            no="Stay",
        )
