"""Judge audit (SPEC §5.1, issue 4 item 5): how reliable is an LLM used as a judge?

One screen in three parts (a ``ContentSwitcher``):

* **setup** — endpoint (discovered servers, the built-in demo labelled simulated — pre-selected when nothing else is
  found — or a custom URL with the *name* of its API-key variable), judge model (``sim-judge`` on the demo), data
  set (bundled or a JSONL path; loader errors inline), criterion, protocol, repetitions k, inputs, candidates per
  input, α, seed. ``ctrl+s`` starts.
* **progress** — :func:`~relgate_tui.engine.judge_audit.run_judge_audit` runs in a thread worker; its progress
  snapshots and error events are picked up by a 4 Hz timer (judge answers done / planned, calls made / cached /
  failed, an errors panel). Escape asks, then stops the audit through its ``should_stop`` hook.
* **results** — :class:`~relgate_tui.tui.judge_results.AuditResultsView`; Enter on an input opens the cycle viewer,
  ``j`` / ``m`` export the JSON document / a Markdown report into ``<data dir>/judge-audits/``.

``JudgeScreen(previous)`` starts from the settings of the last audit (the App keeps them); the screen dismisses
with the configuration it last ran, or None when no audit was started.
"""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import (
    ContentSwitcher,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    ProgressBar,
    RichLog,
    Select,
    Static,
)
from textual.worker import Worker, WorkerState

from relgate_tui.core.text import one_line
from relgate_tui.tui.forms import check_custom_endpoint, first_line, parse_number
from relgate_tui.tui.judge_results import AuditResultsView, CycleViewerModal

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.judge_audit import AuditProgress, JudgeAuditConfig
    from relgate_tui.engine.judge_data import AuditSet
    from relgate_tui.engine.session import EndpointChoice

CUSTOM = "custom"
DATA_FILE = "__file__"
PROTOCOLS = (("pairwise + direct scores", "both"), ("pairwise (both orders)", "pairwise"),
             ("direct 1–5 scores", "direct"))
PHASES = {
    "pairwise": "asking pairwise verdicts (each pair in both orders)…",
    "direct": "asking direct 1–5 scores…",
    "analysis": "computing cycles, MFAS rankings, Kendall τ and conformal sets…",
    "done": "done",
}


class JudgeScreen(Screen["JudgeAuditConfig | None"]):
    CSS_PATH = "judge.tcss"
    BINDINGS = [
        Binding("ctrl+s", "start", "Start audit", id="judge.start", tooltip="Start the audit with these settings"),
        Binding("v", "cycles", "Cycle viewer", id="judge.cycles",
                tooltip="Show the highlighted input's cycles and the verdicts behind them (also Enter)"),
        Binding("j", "export('json')", "JSON", id="judge.json",
                tooltip="Export the audit JSON (the document of relgate judge-audit --json)"),
        Binding("m", "export('md')", "Report", id="judge.md", tooltip="Export a Markdown report of the audit"),
        Binding("escape", "back", "Back", id="judge.back",
                tooltip="Setup: back home · running: stop (asks first) · results: back to the setup"),
    ]
    HELP = (
        "Audits an LLM judge on a data set with human scores (paper 000): every pair of candidates is judged in both "
        "presentation orders, k times; directed 3-cycles of the majority tournament give ρ per input; rankings "
        "(repaired by an exact minimum feedback arc set) are compared with the human ranking by Kendall τ-b; direct "
        "1–5 scores get split-conformal Likert sets. Tab moves between fields (while typing, ? is a character: use "
        "F1). In the results, Enter on an input opens its cycle viewer."
    )
    HELP_TITLE = "Judge audit"

    def __init__(self, previous: JudgeAuditConfig | None = None) -> None:
        super().__init__()
        self.previous = previous
        self.state = "setup"  # setup | running | cancelling | results
        self.endpoints: list[EndpointChoice] = []
        self.audit_set: AuditSet | None = None
        self.data_error = ""
        self.config: JudgeAuditConfig | None = None
        self.endpoint_label = ""
        self.doc: dict[str, Any] | None = None
        self.exported: dict[str, Path] = {}
        self._stop = threading.Event()
        self._progress: AuditProgress | None = None
        self._messages: deque[str] = deque()
        self._errors_seen: set[str] = set()
        self._worker: Worker | None = None

    def _initial(self, field: str, default: str) -> str:
        """A field's starting text: the last audit's value, else ``default`` (None, e.g. "all inputs", is empty)."""
        if self.previous is None:
            return default
        value = getattr(self.previous, field)
        return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    def _initial_data_path(self) -> str:
        from relgate_tui.engine.judge_data import bundled_audit_sets

        data = self.previous.data if self.previous is not None else ""
        return "" if data in {s.name for s in bundled_audit_sets()} else data

    # ---------------------------------------------------------------------------------------------- compose
    def compose(self) -> ComposeResult:
        yield Header()
        with ContentSwitcher(initial="judge-setup", id="judge-parts"):
            with Horizontal(id="judge-setup"):
                yield from self._compose_form()
            with Vertical(id="judge-run"):
                yield from self._compose_progress()
            yield AuditResultsView(id="judge-results")
        yield Footer()

    def _compose_form(self) -> ComposeResult:
        with VerticalScroll(id="judge-form"):
            yield Label("Judge", classes="section")
            with Grid(classes="fields"):
                yield Label("endpoint")
                yield Select([], prompt="looking for local model servers…", id="endpoint", compact=True)
                yield Label("judge model")
                yield Select([], prompt="choose an endpoint first", id="model", compact=True)
                yield Label("URL", classes="custom")
                yield Input(self._initial("endpoint", ""), placeholder="http://host:port/v1", id="url", compact=True,
                            classes="custom")
                yield Label("model name", classes="custom")
                yield Input(self._initial("model", ""), placeholder="model id", id="model-name", compact=True,
                            classes="custom")
                yield Label("API key env var", classes="custom")
                yield Input(self._initial("api_key_env", ""), placeholder="e.g. OPENAI_API_KEY (the name, not the key)",
                            id="api-key-env",
                            compact=True, classes="custom")
            yield Label("Data", classes="section")
            with Grid(classes="fields"):
                yield Label("data set")
                yield Select([], prompt="loading bundled sets…", id="data", compact=True)
                yield Label("data file", classes="datafile")
                yield Input(self._initial_data_path(), placeholder="path/to/audit.jsonl", id="data-path", compact=True,
                            classes="datafile")
                yield Label("criterion")
                yield Select([], prompt="choose a data set first", id="criterion", compact=True)
                yield Label("protocol")
                yield Select(list(PROTOCOLS), value=self._initial("protocol", "both"), allow_blank=False, id="protocol",
                             compact=True)
            yield Label("Size and statistics", classes="section")
            with Grid(classes="fields numbers"):
                yield Label("repetitions k")
                yield Input(self._initial("reps", "3"), id="reps", type="integer", compact=True)
                yield Label("α (Likert sets)")
                yield Input(self._initial("alpha", "0.1"), id="alpha", type="number", compact=True)
                yield Label("inputs")
                yield Input(self._initial("inputs", "20"), placeholder="all", id="n-inputs", type="integer", compact=True)
                yield Label("candidates / input")
                yield Input(self._initial("candidates", "5"), placeholder="all", id="n-candidates", type="integer",
                            compact=True)
                yield Label("seed")
                yield Input(self._initial("seed", "0"), id="seed", type="integer", compact=True)
        with Vertical(id="judge-side"):
            yield Label("Data set", classes="panel-title")
            yield Static("", id="data-info")
            yield Label("Plan", classes="panel-title")
            yield Static("", id="plan")
            yield Static("", id="judge-error")

    def _compose_progress(self) -> ComposeResult:
        yield Static("", id="run-info")
        with Horizontal(id="bar-row"):
            yield ProgressBar(total=1, id="bar", clock=getattr(self.app.services, "progress_clock", None))
            yield Label("", id="answers-count")
        yield Static("", id="phase")
        yield Static("", id="counters")
        yield Static("", id="run-state")
        yield Label("Errors", classes="panel-title")
        yield RichLog(id="errors", wrap=True, markup=False, max_lines=500, min_width=20)

    def on_mount(self) -> None:
        self.sub_title = "judge audit"
        self._toggle_rows()
        self._discover()
        self._set_data_sets()
        self.set_interval(0.25, self._flush, name="judge-refresh")

    def on_unmount(self) -> None:
        self._stop.set()  # a running audit stops with the screen

    # ------------------------------------------------------------------------------------- setup: workers
    @work(thread=True, exclusive=True, group="discover", exit_on_error=False)
    def _discover(self) -> list[EndpointChoice]:
        from relgate_tui.engine.session import endpoint_choices

        services = self.app.services  # type: ignore[attr-defined]
        return endpoint_choices(services.discover, services.embedded_demo, self.app.ensure_demo)  # type: ignore[attr-defined]

    @work(thread=True, exclusive=True, group="models", exit_on_error=False)
    def _list_models(self, base_url: str, api_key_env: str | None) -> tuple[str, ...]:
        from relgate_tui.engine.session import list_models

        return list_models(base_url, api_key_env)

    @work(thread=True, exclusive=True, group="data", exit_on_error=False)
    def _load_data(self, name_or_path: str) -> AuditSet:
        from relgate_tui.engine.judge_data import load_audit_set

        return load_audit_set(name_or_path)

    @on(Worker.StateChanged)
    def _worker_done(self, event: Worker.StateChanged) -> None:
        group, state = event.worker.group, event.state
        if group == "audit":
            self._audit_state(event.worker, state)
            return
        if state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        ok = state == WorkerState.SUCCESS
        result: Any = event.worker.result
        if group == "discover":
            self._set_endpoints(result if ok else [])
        elif group == "models" and ok:
            self._set_models(result)
        elif group == "data":
            self.audit_set, self.data_error = (result, "") if ok else (None, first_line(event.worker.error))
            self._set_criteria()
            self._render_data_info()
            self._update_plan()

    # ---------------------------------------------------------------------------------- setup: populating
    def _set_endpoints(self, endpoints: list[EndpointChoice]) -> None:
        self.endpoints = endpoints
        select = self.query_one("#endpoint", Select)
        options = [(f"{e.label} — {e.error}" if e.error else e.label, f"ep{i}") for i, e in enumerate(endpoints)]
        select.set_options([*options, ("Custom URL (OpenAI-compatible)…", CUSTOM)])
        select.prompt = "choose an endpoint"
        from relgate_tui.engine.session import default_endpoint_index

        index = default_endpoint_index(endpoints)
        if self.previous is not None:  # the last audit's endpoint when it is still listed, else its custom URL
            listed = [i for i, e in enumerate(endpoints) if e.base_url == self.previous.endpoint and not e.error]
            index = listed[0] if listed else None
        select.value = CUSTOM if index is None else f"ep{index}"

    def _chosen_endpoint(self) -> EndpointChoice | None:
        value = self.query_one("#endpoint", Select).value
        if isinstance(value, str) and value.startswith("ep"):
            return self.endpoints[int(value[2:])]
        return None

    def _set_models(self, models: tuple[str, ...]) -> None:
        select = self.query_one("#model", Select)
        select.set_options([(m, m) for m in models])
        select.prompt = "choose the judge model" if models else "no models listed"
        if models:
            last = self.previous.model if self.previous is not None else None
            select.value = last if last in models else "sim-judge" if "sim-judge" in models else models[0]

    def _set_data_sets(self) -> None:
        from relgate_tui.engine.judge_data import bundled_audit_sets

        select = self.query_one("#data", Select)
        sets = bundled_audit_sets()
        options = [(f"{s.name} ({s.inputs} inputs × {s.candidates_per_input} candidates)", s.name) for s in sets]
        select.set_options([*options, ("File… (JSONL)", DATA_FILE)])
        select.prompt = "choose a data set"
        if self.previous is not None:
            select.value = self.previous.data if self.previous.data in {s.name for s in sets} else DATA_FILE
        elif sets:
            select.value = sets[0].name

    def _set_criteria(self) -> None:
        select = self.query_one("#criterion", Select)
        previous = select.value
        if not isinstance(previous, str) and self.previous is not None:
            previous = self.previous.criterion
        names = list(self.audit_set.criteria) if self.audit_set is not None else []
        select.set_options([(n, n) for n in names])
        select.prompt = "choose a criterion" if names else "choose a data set first"
        if names:
            select.value = previous if previous in names else ("Coherence" if "Coherence" in names else names[0])

    # -------------------------------------------------------------------------------------- setup: events
    @on(Select.Changed, "#endpoint")
    def _endpoint_changed(self) -> None:
        self._toggle_rows()
        endpoint = self._chosen_endpoint()
        if endpoint is not None:
            self._set_models(endpoint.judge_models or endpoint.models)
            if not endpoint.models and endpoint.base_url and not endpoint.error:
                self._list_models(endpoint.base_url, None)
        self._update_plan()

    @on(Select.Changed, "#data")
    def _data_changed(self, event: Select.Changed) -> None:
        self._toggle_rows()
        self.audit_set, self.data_error = None, ""
        if event.value == DATA_FILE:
            path = self.query_one("#data-path", Input).value.strip()
            if path:
                self._load_data(path)
        elif isinstance(event.value, str):
            self._load_data(event.value)
        self._set_criteria()
        self._render_data_info()
        self._update_plan()

    @on(Input.Submitted, "#data-path")
    @on(Input.Blurred, "#data-path")
    def _data_path_entered(self) -> None:
        path = self.query_one("#data-path", Input).value.strip()
        if path and self.query_one("#data", Select).value == DATA_FILE:
            self._load_data(path)

    @on(Input.Blurred, "#url")
    @on(Input.Blurred, "#api-key-env")
    def _url_entered(self) -> None:
        url = self.query_one("#url", Input).value.strip()
        if self.query_one("#endpoint", Select).value == CUSTOM and url.startswith(("http://", "https://")):
            self._list_models(url, self.query_one("#api-key-env", Input).value.strip() or None)

    @on(Input.Changed)
    @on(Select.Changed, "#criterion, #protocol, #model")
    def _form_changed(self) -> None:
        self._update_plan()

    def _toggle_rows(self) -> None:
        custom = self.query_one("#endpoint", Select).value == CUSTOM
        for w in self.query(".custom"):
            w.display = custom
        self.query_one("#model", Select).disabled = custom
        file_data = self.query_one("#data", Select).value == DATA_FILE
        for w in self.query(".datafile"):
            w.display = file_data

    # -------------------------------------------------------------------------------------- setup: collect
    def _value(self, wid: str) -> str:
        return self.query_one(f"#{wid}", Input).value.strip()

    def _number(self, wid: str, name: str, kind: type, **limits: Any) -> Any:
        return parse_number(self._value(wid), name, kind, **limits)

    def _endpoint_fields(self) -> tuple[str, str, str | None, str]:
        """(base URL, model, API-key variable name, label shown for the endpoint)."""
        if self.query_one("#endpoint", Select).value == CUSTOM:
            url, model, env = check_custom_endpoint(self._value("url"), self._value("model-name"),
                                                    self._value("api-key-env"),
                                                    model_question="which model should judge?")
            return url, model, env, url
        endpoint = self._chosen_endpoint()
        if endpoint is None:
            raise ValueError("endpoint: choose an endpoint (still looking? wait a second)")
        if endpoint.error or not endpoint.base_url:
            raise ValueError(f"endpoint: {endpoint.label} is not usable ({endpoint.error or 'no URL'})")
        model = self.query_one("#model", Select).value
        if not isinstance(model, str):
            raise ValueError("judge model: choose a model")
        return endpoint.base_url, model, None, endpoint.label

    def _data_name(self) -> str:
        value = self.query_one("#data", Select).value
        if value == DATA_FILE:
            path = self._value("data-path")
            if not path:
                raise ValueError("data file: give the path of a .jsonl audit file")
            if self.data_error:
                raise ValueError(self.data_error)
            return str(Path(path).expanduser().resolve())
        if not isinstance(value, str):
            raise ValueError("data set: choose a data set")
        if self.data_error:
            raise ValueError(self.data_error)
        return value

    def collect(self) -> tuple[JudgeAuditConfig, str]:
        """The form as a :class:`JudgeAuditConfig` and the endpoint's label; ValueError (one line) otherwise."""
        from relgate_tui.engine.judge_audit import JudgeAuditConfig

        url, model, env, label = self._endpoint_fields()
        data = self._data_name()
        criterion = self.query_one("#criterion", Select).value
        if not isinstance(criterion, str):
            raise ValueError("criterion: choose a criterion (the data set is still loading?)")
        cfg = JudgeAuditConfig(
            data=data, criterion=criterion, endpoint=url, model=model, api_key_env=env,
            protocol=str(self.query_one("#protocol", Select).value),
            reps=self._number("reps", "repetitions k", int, lo=1, hi=50),
            inputs=self._number("n-inputs", "inputs", int, lo=1, optional=True),
            candidates=self._number("n-candidates", "candidates / input", int, lo=2, optional=True),
            alpha=self._number("alpha", "α", float, lo=0, hi=1, lo_open=True, hi_open=True),
            seed=self._number("seed", "seed", int, lo=0),
            cache_dir=str(self.app.services.resolved_cache_dir() / "requests"),  # type: ignore[attr-defined]
        )
        cfg.validate()
        return cfg, label

    # ------------------------------------------------------------------------------------ setup: side panel
    def _render_data_info(self) -> None:
        t = Text()
        if self.data_error:
            t.append(self.data_error, style="bold red")
        elif self.audit_set is not None:
            a = self.audit_set
            sizes = sorted({len(i.candidates) for i in a.inputs})
            t.append(f"{a.name}\n", style="bold")
            t.append(f"{len(a.inputs)} inputs × {sizes[0]}{'–' + str(sizes[-1]) if len(sizes) > 1 else ''} "
                     "candidates\n")
            t.append("criteria: " + ", ".join(a.criteria), style="dim")
        else:
            t.append("choose a data set", style="dim")
        self.query_one("#data-info", Static).update(t)

    def _update_plan(self) -> None:
        from relgate_tui.engine.judge_audit import planned_answers, select

        plan = self.query_one("#plan", Static)
        error = self.query_one("#judge-error", Static)
        try:
            cfg, _ = self.collect()
        except ValueError as exc:
            error.update(Text(first_line(exc), style="yellow"))
            plan.update(Text("fill in the form to see the plan", style="dim"))
            return
        error.update("")
        if self.audit_set is None:
            plan.update(Text("loading the data set…", style="dim"))
            return
        inputs = select(self.audit_set, cfg.inputs, cfg.candidates, cfg.seed)
        answers = planned_answers(inputs, cfg.protocol, cfg.reps)
        t = Text()
        t.append(f"{len(inputs)} inputs", style="bold")
        t.append(f" · {cfg.reps} repetitions each\n")
        for name, n in answers.items():
            t.append(f"{name:<10}", style="dim")
            t.append(f"{n:,} judge answers\n", style="bold")
        t.append("answers already in the request cache cost no call", style="dim italic")
        plan.update(t)

    # ------------------------------------------------------------------------------------------- running
    def action_start(self) -> None:
        if self.state != "setup":
            return
        try:
            cfg, label = self.collect()
        except ValueError as exc:
            self.query_one("#judge-error", Static).update(Text(first_line(exc), style="bold red"))
            self.notify(first_line(exc), title="Cannot start yet", severity="error")
            return
        self.config, self.endpoint_label = cfg, label
        self._start_progress_view(cfg, label)
        self._stop.clear()
        self._worker = self._run_audit(cfg)

    def _start_progress_view(self, cfg: JudgeAuditConfig, label: str) -> None:
        self._progress, self._errors_seen = None, set()
        self._messages.clear()
        self.query_one("#errors", RichLog).clear()
        self.query_one("#bar", ProgressBar).update(total=1, progress=0)
        self.query_one("#answers-count", Label).update("")
        self.query_one("#counters", Static).update("")
        self.query_one("#run-info", Static).update(Text(
            f"{cfg.model} judging {Path(cfg.data).name} / {cfg.criterion} · {cfg.protocol}, k = {cfg.reps} · "
            f"{self._audit_size(cfg)} · seed {cfg.seed}\n{label}", style="dim"))
        self.query_one("#phase", Static).update(Text("starting…", style="dim"))
        self._set_state("running")
        self.query_one("#judge-parts", ContentSwitcher).current = "judge-run"

    def _audit_size(self, cfg: JudgeAuditConfig) -> str:
        """"N inputs × M candidates" as the audit will use them (the data set may have fewer than asked for)."""
        from relgate_tui.engine.judge_audit import select

        if self.audit_set is None:
            return f"{cfg.inputs or 'all'} inputs × {cfg.candidates or 'all'} candidates"
        inputs = select(self.audit_set, cfg.inputs, cfg.candidates, cfg.seed)
        sizes = sorted({len(i.candidates) for i in inputs})
        return f"{len(inputs)} inputs × {'/'.join(map(str, sizes))} candidates"

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False, description="Judge audit")
    def _run_audit(self, cfg: JudgeAuditConfig) -> dict[str, Any]:
        from relgate_tui.engine.judge_audit import run_judge_audit

        return run_judge_audit(cfg, self._on_event, on_progress=self._on_progress, should_stop=self._stop.is_set)

    def _on_progress(self, progress: AuditProgress) -> None:
        """Called in the worker thread: keep the latest snapshot for the UI timer."""
        self._progress = progress

    def _on_event(self, event: Any) -> None:
        """Called in the worker thread: queue the messages worth showing (failures, endpoint down / up)."""
        from relgate_tui.engine.sampler import EndpointDown, EndpointUp, SampleFailed

        if isinstance(event, SampleFailed):
            retry = "" if event.final else f" (attempt {event.attempt}, retrying)"
            self._messages.append(f"{event.item_id}: {event.error_kind}: {first_line(event.message)}{retry}")
        elif isinstance(event, EndpointDown):
            self._messages.append(event.message)
        elif isinstance(event, EndpointUp):
            self._messages.append(f"endpoint answers again after {event.down_seconds:.0f} s; going on")

    def _flush(self) -> None:
        """Copy the worker's latest progress and messages into the widgets (4 Hz)."""
        progress = self._progress
        if progress is not None:
            self.query_one("#bar", ProgressBar).update(total=max(1, progress.answers_total),
                                                       progress=progress.answers_done)
            self.query_one("#answers-count", Label).update(
                f" {progress.answers_done:,} / {progress.answers_total:,} judge answers")
            self.query_one("#phase", Static).update(Text(PHASES.get(progress.phase, progress.phase)))
            self.query_one("#counters", Static).update(self._counters(progress))
        log = self.query_one("#errors", RichLog)
        while self._messages:
            message = self._messages.popleft()
            if message not in self._errors_seen:
                self._errors_seen.add(message)
                log.write(Text(one_line(message)))  # server and id text: never markup, no controls

    @staticmethod
    def _counters(p: AuditProgress) -> Text:
        t = Text()
        for name, value, style in (("calls made", p.calls_made, "bold"), ("cached", p.calls_cached, "bold"),
                                   ("failed", p.calls_failed, "bold red" if p.calls_failed else "bold")):
            t.append(f"{name} ", style="dim")
            t.append(f"{value:,}", style=style)
            t.append("   ")
        return t

    def _audit_state(self, worker: Worker, state: WorkerState) -> None:
        if worker is not self._worker or state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        self._flush()
        if state == WorkerState.SUCCESS:
            self._show_results(worker.result)
            return
        from relgate_tui.engine.judge_audit import AuditCancelled

        error = worker.error
        cancelled = isinstance(error, AuditCancelled)
        message = first_line(error) if error is not None else "the audit stopped"
        self._back_to_setup(Text(message, style="bold yellow" if cancelled else "bold red"))
        self.notify(message, title="Audit cancelled" if cancelled else "Audit failed",
                    severity="warning" if cancelled else "error", timeout=10)

    def _show_results(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.exported = {}
        view = self.query_one("#judge-results", AuditResultsView)
        view.show(doc, self.endpoint_label)
        self._set_state("results")
        self.query_one("#judge-parts", ContentSwitcher).current = "judge-results"
        self.query_one("#inputs", DataTable).focus()

    def _back_to_setup(self, note: Text | str = "") -> None:
        self._set_state("setup")
        self.query_one("#judge-parts", ContentSwitcher).current = "judge-setup"
        self._update_plan()
        if note:
            self.query_one("#judge-error", Static).update(note)

    def _set_state(self, state: str) -> None:
        self.state = state
        texts = {
            "running": ("● auditing — Escape stops (asks first)", "bold cyan"),
            "cancelling": ("■ stopping… (answers received so far are cached)", "bold yellow"),
        }
        text, style = texts.get(state, ("", ""))
        self.query_one("#run-state", Static).update(Text(text, style=style))
        self.sub_title = {"setup": "judge audit", "running": "judge audit · running",
                          "cancelling": "judge audit · stopping", "results": "judge audit · results"}[state]
        self.refresh_bindings()

    # ----------------------------------------------------------------------------------------------- actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("export", "cycles"):
            return self.state == "results"
        if action == "start":
            return self.state == "setup"
        return True

    def action_back(self) -> None:
        if self.state == "setup":
            self.dismiss(self.config)
        elif self.state == "results":
            self._back_to_setup()
        elif self.state == "running":
            self.app.confirm(  # type: ignore[attr-defined]
                "Stop the audit?", self._answer_stop,
                "The judge answers received so far stay in the request cache: running the same audit again "
                "asks only for the rest.", yes="Stop", no="Keep going")

    def _answer_stop(self, stop: bool | None) -> None:
        if stop and self.state == "running":
            self._stop.set()
            self._set_state("cancelling")

    def action_cycles(self) -> None:
        pw = (self.doc or {}).get("pairwise")
        if pw is None:
            self.notify("the cycle viewer needs the pairwise protocol", severity="warning")
            return
        inp = self.query_one("#judge-results", AuditResultsView).input_at_cursor(pw)
        if inp is not None:
            self.app.push_screen(CycleViewerModal(inp))

    @on(DataTable.RowSelected, "#inputs")
    def _input_selected(self) -> None:
        self.action_cycles()

    def export_folder(self) -> Path:
        """Judge audits are not runs: their exports go to ``judge-audits/`` beside the runs directory."""
        return self.app.services.resolved_runs_dir().parent / "judge-audits"  # type: ignore[attr-defined]

    def action_export(self, fmt: str) -> None:
        from relgate_tui.engine.judge_audit import export_audit

        if self.doc is None:
            return
        try:
            path = export_audit(self.doc, fmt, self.export_folder())
        except (ValueError, OSError) as exc:
            self.notify(first_line(exc), title="Export failed", severity="error")
            return
        self.exported[fmt] = path
        self.notify(str(path), title=f"Exported {'JSON' if fmt == 'json' else 'Markdown report'}")
