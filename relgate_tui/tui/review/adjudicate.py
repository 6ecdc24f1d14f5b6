"""The adjudicator's queue: every disputed item with each reviewer's label; one key settles the highlighted item.

Keys: ``1``–``9`` the accepted rank, ``x`` none acceptable, ``s`` skip, ``e`` the item's candidates, Escape back.
On PostgreSQL only a member of ``relgate_adjudicator`` may open it (a reviewer is refused with one line). Every
database call runs in a thread worker (:mod:`.dbwork`): the screen says "loading…" / "saving…" and keeps taking keys.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Header, Label, Static

from relgate_tui.core.text import one_line
from relgate_tui.engine.certification.views import ItemView
from relgate_tui.engine.review.status import SessionState, disputed_queue, session_state
from relgate_tui.engine.review.store import ReviewStore
from relgate_tui.tui.review.dbwork import StoreCalls
from relgate_tui.tui.services import host
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.safetext import safe_line

HINT = "1–9 accept that rank · x none acceptable · s skip · e candidates"


class AdjudicateScreen(StoreCalls, Screen[None]):
    CSS_PATH = "review.tcss"
    BINDINGS = [
        *[Binding(str(k), f"decide('{k}')", f"Rank {k}", show=k == 1, id=f"adjudicate.{k}") for k in range(1, 10)],
        Binding("x", "decide('none')", "None", id="adjudicate.none", tooltip="No candidate is acceptable"),
        Binding("s", "decide('skip')", "Skip", id="adjudicate.skip"),
        Binding("e", "samples", "Candidates", id="adjudicate.samples"),
        Binding("escape", "back", "Back", id="adjudicate.back"),
    ]
    HELP = "Each disputed item with every reviewer's label. 1–9 accept that rank, x none acceptable, s skip."
    HELP_TITLE = "Adjudication"

    def __init__(self, store: ReviewStore, session_id: str, adjudicator: str) -> None:
        super().__init__()
        self.store = store
        self.session_id = session_id
        self.adjudicator = adjudicator
        self.queue: list[tuple[str, dict[str, str]]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="adjudicate-main"):
            yield Label("", id="adjudicate-title")
            yield DataTable(id="adjudicate-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="adjudicate-hint")
        yield StockFooter()

    def on_mount(self) -> None:
        self.sub_title = f"adjudication · {self.session_id}"
        self._load()

    def show_busy(self) -> None:
        if self.busy:
            self.query_one("#adjudicate-hint", Static).update(Text(self.busy, style="bold yellow"))

    def _load(self) -> None:
        def failed(exc: BaseException) -> None:
            self.query_one("#adjudicate-table", DataTable).clear(columns=True)
            self.queue = []
            self.query_one("#adjudicate-title", Label).update(safe_line(str(exc), style="bold red"))
            self.query_one("#adjudicate-hint", Static).update("")

        self.store_call("loading the disputed items…",
                        lambda: session_state(self.store, self.session_id, need_all=True), self._loaded, failed)

    def _loaded(self, state: SessionState) -> None:
        table = self.query_one("#adjudicate-table", DataTable)
        table.clear(columns=True)
        self.queue = disputed_queue(state)
        title = Text()
        title.append(f"{len(self.queue)} disputed item{'s' if len(self.queue) != 1 else ''}", style="bold")
        title.append(f" · {len(state.finalised.adjudicated)} adjudicated · session {state.info.name}", style="dim")
        self.query_one("#adjudicate-title", Label).update(title)
        table.add_columns("item", "labels")
        for item, labels in self.queue:
            table.add_row(safe_line(item, 40), safe_line(", ".join(f"{r}: {v}" for r, v in sorted(labels.items())),
                                                         200), key=item)
        self.query_one("#adjudicate-hint", Static).update(Text(HINT, style="dim"))
        if self.queue:
            table.focus()

    def _current(self) -> str | None:
        table = self.query_one("#adjudicate-table", DataTable)
        if not self.queue or table.row_count == 0:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def action_decide(self, verdict: str) -> None:
        item = self._current()
        if item is None:
            self.notify("nothing to adjudicate", severity="warning")
            return

        def job() -> int | None:
            """None when recorded, else the item's number of candidates (the rank does not exist)."""
            if verdict.isdigit():
                n = len(self.store.item(self.session_id, item).candidates)
                if int(verdict) > n:
                    return n
            self.store.adjudicate(self.session_id, item, verdict, self.adjudicator)
            return None

        def done(n: int | None) -> None:
            if n is not None:
                self.notify(f"{one_line(item)} has {n} candidates", severity="warning", markup=False)
                self.query_one("#adjudicate-hint", Static).update(Text(HINT, style="dim"))
                return
            self.notify(f"{one_line(item)} → {verdict}", markup=False)
            self._load()

        self.store_call("saving…", job, done, self._failed)

    def _failed(self, exc: BaseException) -> None:
        self.notify(one_line(str(exc)), severity="error", markup=False)
        self.query_one("#adjudicate-hint", Static).update(Text(HINT, style="dim"))

    def action_samples(self) -> None:
        item = self._current()
        if item is None:
            return

        def done(view: ItemView) -> None:
            self.query_one("#adjudicate-hint", Static).update(Text(HINT, style="dim"))
            host(self.app).open_screen("item_samples", view)

        self.store_call("reading the item…", lambda: self.store.item(self.session_id, item),
                        done, self._failed)

    @on(DataTable.RowSelected, "#adjudicate-table")
    def _selected(self) -> None:
        self.action_samples()

    def action_back(self) -> None:
        self.dismiss(None)
