"""The paraphrase prompt variant in the judge setup (paper 002; issue 13 §1): who writes it, writing it, editing it.

:class:`ParaphrasePanel` (shown while the setup's ``paraphrase`` tick is on) holds a paraphraser model field, a
"Write paraphrase" button and one editable ``TextArea`` per template the protocol uses (pairwise, direct). The button
(handled by the setup, which knows the endpoint, the judges, the seed and the cache) calls :meth:`write`: an async
worker on the app's loop asks the paraphraser through the engine's
:func:`~relgate_tui.engine.judging.paraphrase.write_paraphrase` — the one function the CLI uses, so the same request
is cached and answered identically — and shows the text in the areas. The user may edit it: what the areas hold when
the audit starts is what is asked and stored (:func:`~relgate_tui.engine.judging.paraphrase.edited_variant`: the
origin is kept and marked edited). An edit that loses a placeholder or changes the scale's numbers shows a one-line
error under the areas, and the audit cannot start until it is fixed.

Model text is untrusted: it reaches the areas cleaned of control and bidi characters (the engine's ``clean``), and
every status or error line is a :class:`rich.text.Text` (never parsed as markup).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Static, TextArea

from relgate_tui.core.text import counted
from relgate_tui.tui.forms import first_line

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.judging import Judge, PromptVariant

KINDS = ("pairwise", "direct")


class ParaphrasePanel(Vertical):
    """The paraphraser field, the write button and the editable templates (module docstring)."""

    DEFAULT_CSS = """
    ParaphrasePanel {
        height: auto;
        margin-top: 1;
    }
    ParaphrasePanel .fields {
        grid-size: 2;
        grid-columns: 20 1fr;
        grid-gutter: 0 1;
        height: auto;
    }
    ParaphrasePanel #para-status {
        height: auto;
        margin-left: 21;
    }
    ParaphrasePanel TextArea {
        height: 9;
    }
    ParaphrasePanel .para-label {
        color: $text-muted;
    }
    ParaphrasePanel #para-error {
        height: auto;
    }
    """

    class Changed(Message):
        """The paraphrase was written or edited (the setup redraws its plan)."""

    def __init__(self, previous: PromptVariant | None = None, model: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.written: PromptVariant | None = previous  # the variant the areas started from (the model's or stored)
        self.initial_model = model
        self.protocol = "both"
        self.busy = False

    def compose(self) -> ComposeResult:
        with Grid(classes="fields"):
            yield Label("paraphraser model")
            yield Input(self.initial_model, id="paraphraser", compact=True,
                        placeholder="default: the first judge (on the demo: sim-paraphraser)")
            yield Label("")
            yield Button("Write paraphrase", id="para-generate", compact=True,
                         tooltip="Ask the paraphraser for the paraphrase of the prompt templates (temperature 0, "
                                 "the audit's seed; cached: asking again costs nothing)")
        yield Static("", id="para-status")
        for kind in KINDS:
            yield Label(f"{kind} template (editable: this text is what the judges are asked)",
                        id=f"para-{kind}-label", classes="para-label")
            yield TextArea(getattr(self.written, kind, None) or "", id=f"para-{kind}", soft_wrap=True,
                           show_line_numbers=False, tab_behavior="focus")
        yield Static("", id="para-error")

    def on_mount(self) -> None:
        self._show_areas()
        if self.written is not None:
            self._status(self._written_line())

    # ---------------------------------------------------------------------------------------------- state
    def set_protocol(self, protocol: str) -> None:
        self.protocol = protocol
        self._show_areas()
        self._check()

    def model(self) -> str:
        return self.query_one("#paraphraser", Input).value.strip()

    def _kinds(self) -> tuple[str, ...]:
        from relgate_tui.engine.judging.paraphrase import kinds_of

        return kinds_of(self.protocol)

    def _show_areas(self) -> None:
        kinds = self._kinds()
        for kind in KINDS:
            shown = kind in kinds and self.written is not None
            self.query_one(f"#para-{kind}", TextArea).display = shown
            self.query_one(f"#para-{kind}-label", Label).display = shown

    def _status(self, text: str, style: str = "dim") -> None:
        self.query_one("#para-status", Static).update(Text(text, style=style))

    def _written_line(self) -> str:
        o = self.written.origin if self.written is not None else None
        if o is None:
            return "paraphrase loaded"
        return f"written by {o.model}, seed {o.seed + o.attempt}{' (edited)' if o.edited else ''}"

    # ---------------------------------------------------------------------------------------------- writing
    def write(self, judge: Judge, protocol: str, seed: int, cache_dir: Path | None) -> None:
        """Ask ``judge`` for the paraphrase (an async worker; the result lands in the areas)."""
        self.protocol = protocol
        self.busy = True
        self._status(f"asking {judge.model}…", "italic")
        self.query_one("#para-error", Static).update("")
        self._write(judge, protocol, seed, cache_dir)

    @work(exclusive=True, group="paraphrase", exit_on_error=False)
    async def _write(self, judge: Judge, protocol: str, seed: int, cache_dir: Path | None) -> None:
        from relgate_tui.engine.judging.paraphrase import write_paraphrase
        from relgate_tui.errors import RelgateError

        cache = None
        try:
            if cache_dir is not None:
                from relgate_tui.engine.transport.cache import SampleCache

                cache = SampleCache(cache_dir)
            done = await write_paraphrase(judge, protocol=protocol, seed=seed, cache=cache)
        except RelgateError as exc:
            self._failed(first_line(exc))
            return
        except OSError as exc:
            self._failed(f"cannot open the request cache: {exc.strerror or exc}")
            return
        except Exception as exc:  # noqa: BLE001 - shown as an unexpected error, never as a tidy one
            self._failed(f"unexpected error ({type(exc).__name__}: {first_line(exc)}); please report it")
            return
        finally:
            if cache is not None:
                cache.close()
        self.busy = False
        self.written = done.variant
        for kind in KINDS:
            self.query_one(f"#para-{kind}", TextArea).load_text(getattr(done.variant, kind, None) or "")
        self._show_areas()
        calls = f"{counted(done.calls.made, 'call')}, {done.calls.cached} cached"
        retried = f"; {len(done.rejected)} rejected first" if done.rejected else ""
        self._status(f"{self._written_line()} ({calls}{retried})")
        self._check()
        self.post_message(self.Changed())

    def _failed(self, message: str) -> None:
        self.busy = False
        self._status("")
        self.query_one("#para-error", Static).update(Text(message, style="bold red"))
        self.post_message(self.Changed())

    # ---------------------------------------------------------------------------------------------- editing
    @on(TextArea.Changed)
    def _edited(self, event: TextArea.Changed) -> None:
        event.stop()
        self._check()
        self.post_message(self.Changed())

    def _texts(self) -> dict[str, str]:
        return {kind: self.query_one(f"#para-{kind}", TextArea).text for kind in self._kinds()}

    def _check(self) -> None:
        """The inline one-line error of the current texts (empty when they are usable)."""
        if self.written is None or self.busy:
            return
        try:
            self.variant()
        except ValueError as exc:
            self.query_one("#para-error", Static).update(Text(first_line(exc), style="bold red"))
            return
        self.query_one("#para-error", Static).update("")

    def variant(self) -> PromptVariant:
        """The paraphrase as the areas hold it; ValueError (one line) when there is none yet or an edit broke it."""
        from relgate_tui.engine.judging.paraphrase import edited_variant
        from relgate_tui.errors import UserError

        if self.busy:
            raise ValueError("paraphrase: still being written…")
        if self.written is None:
            raise ValueError("paraphrase: press “Write paraphrase” (or untick paraphrase)")
        missing = [k for k in self._kinds() if getattr(self.written, k) is None]
        if missing:
            raise ValueError(f"paraphrase: no {missing[0]} template yet (the protocol changed): write it again")
        try:
            return edited_variant(self._texts(), self.written)
        except UserError as exc:
            raise ValueError(f"paraphrase: {first_line(exc)}") from None
