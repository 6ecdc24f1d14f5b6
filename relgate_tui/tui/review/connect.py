"""Home → Review (team): connect to a review store, pick a session, label it, see its status, adjudicate.

The database field takes a ``postgresql://`` or ``sqlite:///`` URL (empty: ``$RELGATE_DB``, else the embedded file
in the data dir); a password in it is used for the connection only — the screen shows the URL without it. The name
field is the reviewer's name on the embedded store (``--as``); on PostgreSQL a reviewer is their database role.
Keys: Enter in a field connects, Enter on a session / ``l`` label, ``t`` status, ``a`` adjudicate, Escape back.
Every database call runs in a thread worker (:mod:`.dbwork`): the screen says "connecting…" and keeps taking keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, DataTable, Header, Input, Label, Static

from relgate_tui.core.text import one_line
from relgate_tui.engine.review.store import ReviewStore, SessionInfo, open_store
from relgate_tui.engine.review.summary import as_misses, counted
from relgate_tui.tui.review.dbwork import StoreCalls
from relgate_tui.tui.services import host
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.safetext import safe, safe_line


def _empty_field_target() -> str:
    """Where an empty database field connects (:func:`~relgate_tui.engine.review.db.resolve_url`): ``$RELGATE_DB``,
    else the embedded file in the data dir — shown without a password."""
    import os

    from relgate_tui.core.redact import public_url
    from relgate_tui.engine.review.db import DB_ENV, resolve_url

    url = resolve_url(None)
    if os.environ.get(DB_ENV, "").strip():
        return f"${DB_ENV} ({public_url(url) if '://' in url else url})"
    return f"the embedded file {url.removeprefix('sqlite:///')}"


KEYS_HINT = "on a session: Enter or l label · t status · a adjudicate · Esc back"


class ReviewConnectScreen(StoreCalls, Screen[None]):
    CSS_PATH = "review.tcss"
    BINDINGS = [
        Binding("l", "label", "Label", id="connect.label", tooltip="Label the highlighted session"),
        Binding("t", "status", "Status", id="connect.status", tooltip="Progress, agreement and disputes"),
        Binding("a", "adjudicate", "Adjudicate", id="connect.adjudicate", tooltip="The disputed items"),
        Binding("escape", "back", "Back", id="connect.back"),
    ]
    HELP = ("Connect to the team's review store (PostgreSQL, or the embedded file on this machine), pick a session "
            "and label what the queue hands you.")
    HELP_TITLE = "Review (team)"

    def __init__(self, db: str = "", as_name: str = "") -> None:
        super().__init__()
        self.db = db
        self.as_name = as_name
        self.store: ReviewStore | None = None
        self.sessions: dict[str, SessionInfo] = {}
        self._typed = ""  # the URL as typed (it may hold a password); the field then shows it without

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="connect-main"):
            yield Label("Review store", classes="panel-title")
            with Horizontal(id="connect-row"):
                yield Input(self.db, placeholder="postgresql://role@host/db — empty: $RELGATE_DB or the embedded file",
                            id="connect-db", password=False)
                yield Input(self.as_name, placeholder="your name (embedded store only)", id="connect-as")
                yield Button("Connect", id="connect-go", variant="primary")
            yield Label("", id="connect-where")
            yield Static("", id="connect-hint")
            yield DataTable(id="connect-sessions", cursor_type="row", zebra_stripes=True)
            yield Static("", id="connect-status")
        yield StockFooter()

    def on_mount(self) -> None:
        self.sub_title = "team review"
        self.query_one("#connect-db", Input).focus()
        self._hint()

    @on(Input.Changed, "#connect-db")
    def _hint(self) -> None:
        """Say what Enter does: connect to the URL typed, or (empty field) to ``$RELGATE_DB`` / the embedded file."""
        value = self.query_one("#connect-db", Input).value.strip()
        where = self._public(value) if value else _empty_field_target()
        hint = safe_line(f"Enter in a field connects to {where}", 200, style="dim")
        hint.append("\n" + KEYS_HINT, style="dim")
        self.query_one("#connect-hint", Static).update(hint)

    def show_busy(self) -> None:
        if self.busy:
            self.query_one("#connect-where", Label).update(Text(self.busy, style="bold yellow"))

    @on(Button.Pressed, "#connect-go")
    @on(Input.Submitted)
    def connect(self) -> None:
        if self.busy:
            self.notify(f"{self.busy} — one moment", severity="warning", timeout=2)
            return
        old, self.store = self.store, None
        field = self.query_one("#connect-db", Input)
        shown = field.value.strip()
        url = self._typed if self._typed and shown == self._public(self._typed) else shown

        def job() -> tuple[ReviewStore, list[SessionInfo]]:
            if old is not None:
                old.close()
            store = open_store(url or None)
            try:
                return store, store.sessions()
            except BaseException:
                store.close()
                raise

        def failed(exc: BaseException) -> None:
            self.query_one("#connect-where", Label).update(safe_line(str(exc), style="bold red"))

        self.store_call("connecting…", job, lambda got: self._connected(url, *got), failed)

    def _connected(self, url: str, store: ReviewStore, sessions: list[SessionInfo]) -> None:
        if not self.is_attached:  # left while connecting
            store.close()
            return
        self.store = store
        field = self.query_one("#connect-db", Input)
        if url:  # never leave a password on screen
            self._typed = url
            field.value = self._public(url)
        self.query_one("#connect-where", Label).update(safe_line(f"connected to {self.store.db.public}"))
        table = self.query_one("#connect-sessions", DataTable)
        table.clear(columns=True)
        table.add_columns("session", "name", "run", "R", "items")
        self.sessions = {s.id: s for s in sessions}
        for s in sessions:
            table.add_row(s.id, safe_line(s.name, 50), safe_line(s.run_id, 40), str(s.per_item), str(s.n_items),
                          key=s.id)
        if sessions:
            table.focus()
        else:
            self.query_one("#connect-status", Static).update(Text(
                "no session yet: Runs → Publish for review (p), or `relgate review publish RUN`", style="dim"))

    @staticmethod
    def _public(url: str) -> str:
        from relgate_tui.core.redact import public_url

        return public_url(url) if "://" in url else url

    def _current(self) -> SessionInfo | None:
        table = self.query_one("#connect-sessions", DataTable)
        if self.store is None or not self.sessions or table.row_count == 0:
            self.notify("connect and pick a session first", severity="warning")
            return None
        return self.sessions.get(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def _as_name(self) -> str | None:
        return self.query_one("#connect-as", Input).value.strip() or None

    def _with_identity(self, then: Callable[[ReviewStore, SessionInfo, str], None]) -> None:
        """Ask the store who labels (a database call on PostgreSQL), then ``then(store, session, who)``."""
        s = self._current()
        store = self.store
        if s is None or store is None:
            return
        as_name = self._as_name()

        def failed(exc: BaseException) -> None:
            self.notify(one_line(str(exc)), severity="error", markup=False)

        self.store_call("connecting…", lambda: store.db.identity(as_name), lambda who: then(store, s, who), failed)

    @on(DataTable.RowSelected, "#connect-sessions")
    def action_label(self) -> None:
        from relgate_tui.engine.review.client import Reviewer

        def go(store: ReviewStore, s: SessionInfo, who: str) -> None:
            host(self.app).open_screen("review_label", Reviewer(store, s, who), callback=lambda _: self.action_status())

        self._with_identity(go)

    def action_status(self) -> None:
        from relgate_tui.engine.review.status import session_state, status_document

        s = self._current()
        store = self.store
        if s is None or store is None:
            return

        def failed(exc: BaseException) -> None:
            self.query_one("#connect-status", Static).update(safe_line(str(exc), style="bold red"))

        def done(doc: dict[str, Any]) -> None:
            self.query_one("#connect-where", Label).update(safe_line(f"connected to {store.db.public}"))
            self._show_status(doc)

        self.store_call("reading the session…", lambda: status_document(session_state(store, s.id)), done, failed)

    def _show_status(self, doc: dict[str, Any]) -> None:

        def est(e: dict[str, object]) -> str:
            v, ci = e.get("value"), e.get("ci")
            if not isinstance(v, float):
                return "—"
            return f"{v:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if isinstance(ci, list) else "")

        ag = doc["agreement"]
        lines = [f"{counted(doc['labels'], 'label')} on {counted(doc['items'], 'item')} · {len(doc['final'])} final · "
                 f"{len(doc['disputed'])} disputed · {len(doc['adjudicated'])} adjudicated · "
                 f"{len(doc['pending'])} pending",
                 f"Fleiss κ {est(ag['fleiss_kappa'])} · Krippendorff α {est(ag['krippendorff_alpha'])} "
                 "(95% bootstrap over items)"]
        if doc["counted_as_misses"]:
            lines.append(f"{as_misses(len(doc['counted_as_misses']))} (strict policy)")
        for p in ag["pairs"]:
            lines.append(f"Cohen κ {p['a']} · {p['b']}: {est(p['cohen_kappa'])}")
        for name, r in doc["reviewers"].items():
            lines.append(f"{name}: {counted(r['labels'], 'label')} · agreement with final "
                         f"{est(r['agreement_with_final'] or {})}")
        lines.extend(doc["left_out"])  # stored labels that are no verdict, named and counted missing (issue 29)
        if not doc["complete_view"]:
            lines.append("(your role reads only part of the labels: these figures cover what it may read)")
        self.query_one("#connect-status", Static).update(safe("\n".join(lines)))

    def action_adjudicate(self) -> None:
        def go(store: ReviewStore, s: SessionInfo, who: str) -> None:
            host(self.app).open_screen("review_adjudicate", store, s.id, who, callback=lambda _: self.action_status())

        self._with_identity(go)

    def action_back(self) -> None:
        if self.store is not None:
            store, self.store = self.store, None
            # closed off the UI thread by an app worker, which outlives this screen
            self.app.run_worker(store.close, thread=True, group="review-close", exit_on_error=False)
        self.dismiss(None)
