"""The setup part of the judge audit screen: endpoint, judge model, data set, criterion, protocol, size.

:class:`JudgeSetup` is the base of :class:`~relgate_tui.tui.judge.screen.JudgeScreen`: it composes the form, fills
its choices from worker threads (discovered endpoints, listed models, the data set's loader — each a blocking call),
and turns the form into a :class:`~relgate_tui.engine.judge_audit.JudgeAuditConfig` (:meth:`collect`). The side
panel shows the data set and the plan (judge answers per protocol, asked of the engine).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Grid, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, Label, Select, Static

from relgate_tui.tui.forms import check_custom_endpoint, first_line, parse_number

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.judge_audit import JudgeAuditConfig
    from relgate_tui.engine.judge_data import AuditSet
    from relgate_tui.engine.session import EndpointChoice

CUSTOM = "custom"
DATA_FILE = "__file__"
PROTOCOLS = (("pairwise + direct scores", "both"), ("pairwise (both orders)", "pairwise"),
             ("direct 1–5 scores", "direct"))


class JudgeSetup(Screen["JudgeAuditConfig | None"]):
    """The form (see the module docstring). Subclasses add the run and the results."""

    previous: JudgeAuditConfig | None
    endpoints: list[EndpointChoice]
    audit_set: AuditSet | None
    data_error: str

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
        chosen = self.query_one("#model", Select).value
        if not isinstance(chosen, str):
            raise ValueError("judge model: choose a model")
        return endpoint.base_url, chosen, None, endpoint.label

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
            cache_dir=str(self.app.services.resolved_cache_dir() / "samples"),  # type: ignore[attr-defined]
            store=True, store_dir=str(self.app.services.resolved_runs_dir().parent / "audits"),  # type: ignore[attr-defined]
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
        t.append("answers already stored or in the request cache cost no call", style="dim italic")
        plan.update(t)

