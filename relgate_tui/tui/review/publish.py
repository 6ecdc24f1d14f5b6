"""Runs → Publish for review (``p``): the highlighted run's calibration items into a new team-review session.

Database field as on Review (team) (empty: ``$RELGATE_DB``, else the embedded file); R distinct reviewers per item.
Dismisses with the new session id (None when left without publishing). The database calls run in a thread worker
(:mod:`.dbwork`): the dialog says "publishing…" and keeps taking keys.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from relgate_tui.core.text import counted
from relgate_tui.tui.review.dbwork import StoreCalls
from relgate_tui.tui.widgets.safetext import safe_line


class PublishModal(StoreCalls, ModalScreen[str | None]):
    CSS_PATH = "publish.tcss"
    BINDINGS = [Binding("escape", "close", "Back", id="publish.back")]
    HELP = "Publish the run's calibration items so several reviewers can label them (each item by R of them)."
    HELP_TITLE = "Publish for review"

    def __init__(self, run_path: Path, db: str = "") -> None:
        super().__init__()
        self.run_path = run_path
        self.db = db
        self.session: str | None = None
        self._typed = ""  # the URL as typed (it may hold a password); the field then shows it without

    def compose(self) -> ComposeResult:
        with Vertical(id="publish-dialog"):
            yield Label(safe_line(f"Publish run {self.run_path.name} for team review", 90), id="publish-title")
            yield Input(self.db, placeholder="postgresql://role@host/db — empty: $RELGATE_DB or the embedded file",
                        id="publish-db")
            yield Input("2", placeholder="reviewers per item (R)", id="publish-r", type="integer")
            yield Static("", id="publish-result")
            with Horizontal(id="publish-buttons"):
                yield Button("Publish", id="publish-go", variant="primary")
                yield Button("Close", id="publish-close")

    def on_mount(self) -> None:
        self.query_one("#publish-db", Input).focus()

    @on(Button.Pressed, "#publish-go")
    @on(Input.Submitted)
    def publish(self) -> None:
        from relgate_tui.core.redact import public_url
        from relgate_tui.engine.review.publish import publish_run
        from relgate_tui.engine.review.store import open_store

        out = self.query_one("#publish-result", Static)
        field = self.query_one("#publish-db", Input)
        shown = field.value.strip()
        url = self._typed if self._typed and shown == public_url(self._typed) else shown
        try:
            per_item = int(self.query_one("#publish-r", Input).value or "2")
        except ValueError as exc:
            out.update(safe_line(str(exc), style="bold red"))
            return
        run_path = str(self.run_path)

        def job() -> tuple[str, int, str]:
            store = open_store(url or None)
            try:
                sid, n = publish_run(store, run_path, per_item=per_item, created_by=store.db.identity(None))
                return sid, n, store.db.public
            finally:
                store.close()

        def failed(exc: BaseException) -> None:
            out.update(safe_line(str(exc), style="bold red"))

        self.store_call("publishing…", job, lambda got: self._published(url, per_item, *got), failed)

    def show_busy(self) -> None:
        if self.busy:
            self.query_one("#publish-result", Static).update(safe_line(self.busy, style="bold yellow"))

    def _published(self, url: str, per_item: int, sid: str, n: int, where: str) -> None:
        from relgate_tui.core.redact import public_url

        out = self.query_one("#publish-result", Static)
        field = self.query_one("#publish-db", Input)
        self.session = sid
        if "://" in url:  # never leave a password on screen
            self._typed = url
            field.value = public_url(url)
        out.update(safe_line(f"session {sid}: {counted(n, 'item')}, {counted(per_item, 'reviewer')} each, in {where}",
                             style="bold green"))
        self.notify(f"published: session {sid}")

    @on(Button.Pressed, "#publish-close")
    def action_close(self) -> None:
        self.dismiss(self.session)
