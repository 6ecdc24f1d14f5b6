"""Setup (SPEC §5.1): endpoint + model, task, canonicalizer, verification mode, the judges, the sampling and
calibration options and the run's gate (both generated from the option table: :mod:`relgate_tui.tui.option_fields`)
— and a pre-flight box (calls, judge calls, time, cost). The gate is the run's own (threshold, basis, confidence,
one-look plan, the judge-assisted bound's population), prefilled from Settings; the verification mode defaults to
"auto", as ``relgate certify``'s, so the headless command continues the run the TUI started.

Endpoints: the local servers discovery finds are listed first; when none is found the built-in demo endpoint is
started in-process on a free loopback port and pre-selected, labelled "simulated". "Custom URL" takes any
OpenAI-compatible base URL and the *name* of the environment variable holding its API key (the key itself is never
shown or stored).

Dismisses with a :class:`~relgate_tui.engine.certification.session.RunSetup` (Ctrl+S / Start) or None (Escape).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Label, Select, Static
from textual.worker import Worker, WorkerState

from relgate_tui.engine.certification.setup import (
    EndpointChoice,
    Latency,
    Preflight,
    RunSetup,
    TaskChoice,
    default_endpoint_index,
    endpoint_choices,
    inspect_task,
    list_models,
    preflight,
    task_choices,
)
from relgate_tui.tui.forms import check_custom_endpoint, parse_number
from relgate_tui.tui.judge_fields import JUDGE_FIELDS, chosen_judge, judge_fields, set_judge_options
from relgate_tui.tui.option_fields import collect_options, option_widgets
from relgate_tui.tui.preflight_text import judge_note, preflight_text
from relgate_tui.tui.setup_probe import LatencyProbe
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.safetext import safe_line

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.tui.services import AppHost

CUSTOM = "custom"
TASK_FILE = "__file__"
CANONS = (("numeric", "numeric"), ("mcq (option letters)", "mcq"), ("text", "text"),
          ("math (equivalence, needs math-verify)", "math"), ("regex:…", "regex"))
VERIFICATION = (("auto: references first", "auto"), ("by hand, even with refs", "human"),  # each fits 80 columns
                ("audit: refs + re-checks", "audit"))  # (issue 31 item 17)


class SetupScreen(LatencyProbe, Screen["RunSetup | None"]):
    CSS_PATH = "setup.tcss"
    BINDINGS = [
        Binding("ctrl+s", "start", "Start run", id="setup.start", tooltip="Start sampling with these settings"),
        Binding("ctrl+l", "probe", "Probe latency", id="setup.probe",
                tooltip="Send one request to measure the endpoint's latency"),
        Binding("ctrl+o", "save_config", "Save config", id="setup.save_config",
                tooltip="Save these settings as a run config: relgate certify --config FILE runs the same run"),
        Binding("escape", "back", "Back", id="setup.back", tooltip="Back to home"),
    ]
    HELP = (
        "Tab / Shift+Tab move between fields; arrows + Enter open a list. The pre-flight box updates as you type. "
        "Ctrl+S starts the run. (While typing in a field, ? is a character: use F1 for this help.)"
    )
    HELP_TITLE = "Setup"

    def __init__(self, app: AppHost, previous: RunSetup | None = None) -> None:
        super().__init__()
        self.relgate = app
        self.previous = previous
        self.endpoints: list[EndpointChoice] = []
        self.tasks: list[TaskChoice] = []
        self.task_info: TaskChoice | None = None
        self.task_error = ""
        self.latency: Latency | None = None  # what the probe measured
        self.latency_error = ""
        self.still_loading = {"discover": "looking for local model servers", "tasks": "reading the bundled tasks"}  # running
        self.latency_parallel = 1  # requests the probe sent at once (the run's concurrency, at most 16)
        # A value set by the screen itself (suggestions) is remembered, so that its Changed event is not mistaken
        # for the user's choice (Changed messages arrive after the assignment).
        self._canon_touched = False
        self._auto_canon: str | None = None

    # ---------------------------------------------------------------------------------------------- compose
    def _new_setup(self) -> RunSetup:
        """A new run's defaults: the Settings gate (threshold, basis, confidence) — Settings are defaults for new runs
        only; a run keeps the gate it was made with. Settings' "bound" is the default basis: the judge-assisted bound
        with a verification judge, as ``relgate certify``'s."""
        s = getattr(self.relgate, "settings", None)
        if s is None:
            return RunSetup(base_url="", model="", task="")
        return RunSetup(base_url="", model="", task="", min_reliability=s.gate, confidence=s.confidence,
                        gate_on="level" if s.gate_on == "level" else None)

    def compose(self) -> ComposeResult:
        p = self.previous or self._new_setup()
        yield Header()
        with Horizontal(id="setup-main"):
            with VerticalScroll(id="form"):
                yield Label("Model", classes="section")
                with Grid(classes="fields"):
                    yield Label("endpoint")
                    yield Select([], prompt="looking for local model servers…", id="endpoint", compact=True)
                    yield Label("model", classes="listed")  # a custom URL has one model field: "model name"
                    yield Select([], prompt="choose an endpoint first", id="model", compact=True, classes="listed")
                    yield Label("URL", classes="custom")
                    yield Input(p.base_url if not p.simulated else "", placeholder="http://host:port/v1",
                                id="url", compact=True, classes="custom")
                    yield Label("model name", classes="custom")
                    yield Input(p.model if not p.simulated else "", placeholder="model id", id="model-name",
                                compact=True, classes="custom")
                    yield Label("API key env var", classes="custom")
                    yield Input(p.api_key_env or "", placeholder="e.g. OPENAI_API_KEY (the name, not the key)",
                                id="api-key-env", compact=True, classes="custom")
                    yield Label("system prompt")
                    yield Input(p.system or "", placeholder="(none)", id="system", compact=True)
                yield Label("Task", classes="section")
                with Grid(classes="fields"):
                    yield Label("task")
                    yield Select([], prompt="loading bundled tasks…", id="task", compact=True)
                    yield Label("task file", classes="taskfile")
                    yield Input("", placeholder="path/to/items.jsonl or .csv", id="task-path", compact=True,
                                classes="taskfile")
                    yield Label("canonicalizer")
                    yield Select([(a, b) for a, b in CANONS], value="numeric", allow_blank=False, id="canon",
                                 compact=True)
                    yield Label("regex pattern", classes="regex")
                    yield Input("", placeholder="one capture group, e.g. ANSWER: (\\w+)", id="regex",
                                compact=True, classes="regex")
                    yield Label("verification")
                    yield Select([(a, b) for a, b in VERIFICATION], value=p.verification, allow_blank=False,
                                 id="verification", compact=True)
                yield from judge_fields(p.pairwise_judge_reps)
                yield Label("Sampling and calibration", classes="section")
                with Grid(classes="fields numbers"):
                    yield from option_widgets("sampling", p)
                yield Label("Gate (the run's own)", classes="section")
                with Grid(classes="fields numbers"):
                    yield from option_widgets("gate", p)
                with Horizontal(id="setup-buttons"):
                    yield Button("Start run (^s)", id="start", variant="primary")
                    yield Button("Probe latency (^l)", id="probe")
                    yield Button("Back (Esc)", id="back")
            with Vertical(id="side"):
                yield Label("Task", classes="panel-title")
                yield Static("", id="task-info")
                yield Label("Pre-flight", classes="panel-title")
                yield Static("", id="preflight")
                yield Static("", id="judge-note")
                yield Button("Verify by hand", id="by-hand", compact=True)
                yield Static("", id="setup-error")
        yield StockFooter()

    def on_mount(self) -> None:
        self.sub_title = "new run"
        self._toggle_rows()
        self._discover()
        self._load_tasks()
        self._update_preflight()

    # ---------------------------------------------------------------------------------------------- workers
    @work(thread=True, exclusive=True, group="discover", exit_on_error=False)
    def _discover(self) -> list[EndpointChoice]:
        from relgate_tui.tui.demo_endpoint import demo_endpoint

        services = self.relgate.services
        return endpoint_choices(services.discover, services.embedded_demo,
                                lambda: demo_endpoint(self.relgate.ensure_demo()))

    @work(thread=True, exclusive=True, group="tasks", exit_on_error=False)
    def _load_tasks(self) -> list[TaskChoice]:
        return task_choices()

    @work(thread=True, exclusive=True, group="task-file", exit_on_error=False)
    def _inspect_task(self, name_or_path: str) -> TaskChoice:
        return inspect_task(name_or_path)

    @work(thread=True, exclusive=True, group="models", exit_on_error=False)
    def _list_models(self, base_url: str, api_key_env: str | None) -> tuple[str, ...]:
        return list_models(base_url, api_key_env)

    @on(Worker.StateChanged)
    def _worker_done(self, event: Worker.StateChanged) -> None:
        group = event.worker.group
        ok = event.state == WorkerState.SUCCESS
        failed = event.state == WorkerState.ERROR
        if not (ok or failed):
            return
        result: Any = event.worker.result
        error = str(event.worker.error) if failed else ""
        self.still_loading.pop(group or "", None)
        if group == "discover":
            self._set_endpoints(result if ok else [])
            if failed:
                self.notify(error, title="Discovery failed", severity="warning")
            self._update_preflight()
        elif group == "tasks":
            self._set_tasks(result if ok else [], error)
        elif group == "task-file":
            self.task_info, self.task_error = (result, "") if ok else (None, error)
            if ok:
                self._suggest_canon(result.canon)
            self._render_task_info()
            self._update_preflight()
        elif group == "probe":
            self.latency, self.latency_error = (result, "") if ok else (None, error)
            if ok:
                self._probe_done(result)
            self._update_preflight()
        elif group == "models" and ok:
            self._set_models(result)

    # ------------------------------------------------------------------------------------------ populating
    def _set_endpoints(self, endpoints: list[EndpointChoice]) -> None:
        self.endpoints = endpoints
        select = self.query_one("#endpoint", Select)
        options: list[tuple[Text, str]] = [(safe_line(self._endpoint_label(e)), f"ep{i}")
                                           for i, e in enumerate(endpoints)]
        options.append((Text("Custom URL (OpenAI-compatible)…"), CUSTOM))
        select.set_options(options)
        select.prompt = "choose an endpoint"
        value = self._initial_endpoint_value()
        select.value = value

    def _initial_endpoint_value(self) -> str:
        p = self.previous
        if p is not None and not p.simulated:
            for i, e in enumerate(self.endpoints):
                if e.base_url == p.base_url:
                    return f"ep{i}"
            return CUSTOM
        index = default_endpoint_index(self.endpoints)
        return CUSTOM if index is None else f"ep{index}"

    @staticmethod
    def _endpoint_label(e: EndpointChoice) -> str:
        if e.error:
            return f"{e.label} — {e.error}"
        n = len(e.models)
        suffix = f" · {n} model{'s' if n != 1 else ''}" if n else ""
        return f"{e.label}{suffix}"

    def _set_models(self, models: tuple[str, ...]) -> None:
        if self.query_one("#endpoint", Select).value == CUSTOM and models:  # a typed URL, any port (issue 31 item 5)
            name = self.query_one("#model-name", Input)
            name.value = name.value.strip() or models[0]  # the first model fills an empty "model name"
            self.notify(f"the server lists: {', '.join(models[:6])}{' …' if len(models) > 6 else ''}", title="Custom URL")
        select = self.query_one("#model", Select)
        select.set_options([(safe_line(m), m) for m in models])  # server-listed names: never markup
        if not models:
            select.prompt = "no models listed"
            return
        prev = self.previous.model if self.previous else ""
        # Default for the simulated endpoint: the middle-quality model, which makes an instructive demo.
        preferred = prev if prev in models else ("sim-mid" if "sim-mid" in models else models[0])
        select.value = preferred
        ep_value = self.query_one("#endpoint", Select).value
        endpoint = (self.endpoints[int(ep_value[2:])]
                    if isinstance(ep_value, str) and ep_value.startswith("ep") else None)
        set_judge_options(self, endpoint.judge_models if endpoint is not None and endpoint.judge_models else models,
                          self.previous)

    def _set_tasks(self, tasks: list[TaskChoice], error: str = "") -> None:
        self.tasks = tasks
        select = self.query_one("#task", Select)
        options = [(f"{t.name} ({t.n_items} items)", t.name) for t in tasks]
        options.append(("File… (JSONL or CSV)", TASK_FILE))
        select.set_options(options)
        select.prompt = "choose a task"
        prev = self.previous.task if self.previous else ""
        names = [t.name for t in tasks]
        if prev and prev in names:
            select.value = prev
        elif prev:
            select.value = TASK_FILE
            self.query_one("#task-path", Input).value = prev
        elif names:
            select.value = "bigbench-3digit-addition" if "bigbench-3digit-addition" in names else names[0]
        if error:
            self.task_error = error
            self._render_task_info()

    def _suggest_canon(self, canon: str) -> None:
        if self._canon_touched or not canon:
            return
        select = self.query_one("#canon", Select)
        if canon.startswith("regex:"):
            self._auto_canon = "regex"
            self.query_one("#regex", Input).value = canon[len("regex:"):]
        else:
            self._auto_canon = canon
        select.value = self._auto_canon

    # ------------------------------------------------------------------------------------------------ events
    @on(Select.Changed, "#endpoint")
    def _endpoint_changed(self, event: Select.Changed) -> None:
        self._toggle_rows()
        self.latency = None
        value = event.value
        if isinstance(value, str) and value.startswith("ep"):
            e = self.endpoints[int(value[2:])]
            self._set_models(e.models)
            if not e.models and e.base_url:
                self._list_models(e.base_url, None)
        self._update_preflight()
        self._auto_probe()

    @on(Select.Changed, "#model")
    def _model_changed(self) -> None:
        self.latency = None
        self._update_preflight()
        self._auto_probe()

    @on(Select.Changed, "#task")
    def _task_changed(self, event: Select.Changed) -> None:
        self._toggle_rows()
        value = event.value
        self.task_error = ""
        if value == TASK_FILE:
            path = self.query_one("#task-path", Input).value.strip()
            self.task_info = None
            if path:
                self._inspect_task(path)
        elif isinstance(value, str):
            self.task_info = next((t for t in self.tasks if t.name == value), None)
            if self.task_info is not None:
                self._suggest_canon(self.task_info.canon)
        self._render_task_info()
        self._update_preflight()

    @on(Input.Submitted, "#task-path")
    @on(Input.Blurred, "#task-path")
    def _task_path_entered(self) -> None:
        path = self.query_one("#task-path", Input).value.strip()
        if path and self.query_one("#task", Select).value == TASK_FILE:
            self._inspect_task(path)

    @on(Select.Changed, "#canon")
    def _canon_changed(self, event: Select.Changed) -> None:
        if event.value not in (self._auto_canon, "numeric"):  # (mount posts the initial value too)
            self._canon_touched = True
        self._toggle_rows()
        self._update_preflight()

    @on(Input.Blurred, "#url")
    @on(Input.Blurred, "#api-key-env")
    @on(Input.Blurred, "#model-name")
    def _url_entered(self) -> None:
        if self.query_one("#endpoint", Select).value == CUSTOM:
            url = self.query_one("#url", Input).value.strip()
            if url:
                self._list_models(url, self.query_one("#api-key-env", Input).value.strip() or None)
            self._remeasure()  # a new endpoint or model: the old latency says nothing about it

    @on(Input.Blurred, "#concurrency")
    @on(Input.Submitted, "#concurrency")
    def _concurrency_entered(self) -> None:
        """The probe measures at the run's concurrency: once the field is left, not on each keystroke (typing "16"
        restarted it at 1 and then 16; a one-slot server then answered the abandoned requests first)."""
        self._remeasure()

    @on(Input.Changed)
    @on(Select.Changed)
    def _any_change(self, event: Input.Changed | Select.Changed) -> None:
        if event.control.id in ("judge-model", "verify-judge-model") and self.latency is not None:
            self._remeasure()  # the probe times the run's judge
        elif event.control.id in ("concurrency", "k-max", "delta", "stopping", "alpha", "n-cal", "limit", "price-in",
                                  "price-out", "verification", "batch", *JUDGE_FIELDS):
            self._update_preflight()

    def _toggle_rows(self) -> None:
        custom = self.query_one("#endpoint", Select).value == CUSTOM
        for w in self.query(".custom"):
            w.display = custom
        for w in self.query(".listed"):  # never two model fields (issue 31 item 5)
            w.display = not custom
        self.query_one("#model", Select).disabled = custom
        file_task = self.query_one("#task", Select).value == TASK_FILE
        for w in self.query(".taskfile"):
            w.display = file_task
        regex = self.query_one("#canon", Select).value == "regex"
        for w in self.query(".regex"):
            w.display = regex

    # ---------------------------------------------------------------------------------------------- collect
    def _value(self, wid: str) -> str:
        return self.query_one(f"#{wid}", Input).value.strip()

    def collect(self) -> RunSetup:
        """The form as a :class:`RunSetup`; raises ValueError with a one-line message naming the field."""
        ep_value = self.query_one("#endpoint", Select).value
        if ep_value == CUSTOM:
            url, model, env = check_custom_endpoint(self._value("url"), self._value("model-name"),
                                                    self._value("api-key-env"),
                                                    model_question="which model should be asked?")
            simulated = False
        elif isinstance(ep_value, str) and ep_value.startswith("ep"):
            e = self.endpoints[int(ep_value[2:])]
            if e.error or not e.base_url:
                raise ValueError(f"endpoint: {e.label} is not usable ({e.error or 'no URL'})")
            url, env, simulated = e.base_url, None, e.simulated
            model_value = self.query_one("#model", Select).value
            if not isinstance(model_value, str):
                raise ValueError("model: choose a model")
            model = model_value
        else:
            raise ValueError("endpoint: choose an endpoint (still looking? wait a second)")

        task_value = self.query_one("#task", Select).value
        if task_value == TASK_FILE:
            task = self._value("task-path")
            if not task:
                raise ValueError("task file: give the path of a .jsonl or .csv file")
            task = str(Path(task).expanduser().resolve())  # the run can be reopened from any directory
            if self.task_error:
                raise ValueError(self.task_error)
        elif isinstance(task_value, str):
            task = task_value
        else:
            raise ValueError("task: choose a task")

        canon_value = self.query_one("#canon", Select).value
        canon = str(canon_value)
        if canon == "regex":
            pattern = self._value("regex")
            if not pattern:
                raise ValueError("regex pattern: give a pattern with one capture group")
            canon = f"regex:{pattern}"
        settings = getattr(self.relgate, "settings", None)
        return RunSetup(
            base_url=url,
            model=model,
            task=task,
            api_key_env=env,
            simulated=simulated,
            canon=canon,
            system=self._value("system") or None,
            **collect_options(self, "sampling"),
            **collect_options(self, "gate"),
            verification=str(self.query_one("#verification", Select).value),  # type: ignore[arg-type]
            audit_fraction=getattr(settings, "audit_fraction", 0.2),
            pairwise_judge_model=chosen_judge(self, "judge-model"),
            verify_judge_model=chosen_judge(self, "verify-judge-model"),
            pairwise_judge_reps=parse_number(self._value("judge-reps"), "judge repetitions", int, lo=1, hi=50),
        )

    # -------------------------------------------------------------------------------------------- preflight
    def _render_task_info(self) -> None:
        t = Text()
        if self.task_error:
            t.append(self.task_error, style="bold red")
        elif self.task_info is not None:
            ti = self.task_info
            t.append(f"{ti.name}\n", style="bold")
            t.append(f"{ti.n_items} items · ")
            t.append("references: yes" if ti.has_references else "no references: human spot-check",
                     style="green" if ti.has_references else "yellow")
            t.append(f"\nsuggested canonicalizer: {ti.canon}\n", style="dim")
            if ti.canon_source and not ti.bundled:  # why: a task file is never silently "text" (issue 31 item 4)
                t.append(f"({ti.canon_source})\n", style="yellow" if not ti.has_references else "dim")
            if ti.description:
                t.append(ti.description[:240], style="dim")
        else:
            t.append("choose a task", style="dim")
        self.query_one("#task-info", Static).update(t)

    def _update_preflight(self) -> None:
        box = self.query_one("#preflight", Static)
        err = self.query_one("#setup-error", Static)
        if self.still_loading:  # discovery or the task list still running: say so, not "choose …" (issue 31 item 16)
            err.update(Text("loading… " + " · ".join(self.still_loading.values()), style="bold yellow"))
            return
        try:
            setup = self.collect()
        except ValueError as exc:
            err.update(Text(str(exc), style="yellow"))
            if self.task_info is None:
                box.update(Text("fill in the form to see the estimate", style="dim"))
                return
            setup = None
        else:
            err.update("")
        if self.task_info is None:
            box.update(Text("choose a task to see the estimate", style="dim"))
            return
        try:
            pf: Preflight = preflight(setup, self.task_info, self.latency) if setup else None  # type: ignore[assignment]
        except ValueError as exc:
            err.update(Text(str(exc), style="yellow"))
            return
        if pf is None:
            return
        box.update(preflight_text(pf, setup, self.latency, self.latency_parallel, self.latency_error))
        self._judge_note(setup)

    def _judge_note(self, setup: RunSetup | None) -> None:
        """Before sampling (issue 31 item 1): a verification judge with nothing to verify is said, with an offer."""
        note = judge_note(setup, self.task_info)
        self.query_one("#judge-note", Static).update(note or "")
        self.query_one("#by-hand", Button).display = note is not None

    # ---------------------------------------------------------------------------------------------- actions
    def action_start(self) -> None:
        try:
            setup = self.collect()
        except ValueError as exc:
            self.query_one("#setup-error", Static).update(Text(str(exc), style="bold red"))
            self.notify(str(exc), title="Cannot start yet", severity="error")
            return
        self.dismiss(setup)

    def action_save_config(self) -> None:
        try:
            setup = self.collect()
        except ValueError as exc:
            self.notify(str(exc), title="Cannot save yet", severity="error")
            return
        self.app.save_run_config(setup)  # type: ignore[attr-defined]

    def action_back(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#start, #probe, #back")
    def _button_pressed(self, event: Button.Pressed) -> None:
        {"start": self.action_start, "probe": self.action_probe, "back": self.action_back}[str(event.button.id)]()

    @on(Button.Pressed, "#by-hand")
    def _by_hand_pressed(self) -> None:
        self.query_one("#verification", Select).value = "human"
