"""The setup part of the judge audit screen: endpoint, judge models, prompt variants, data set, criterion,
protocol, size.

:class:`JudgeSetup` is the base of :class:`~relgate_tui.tui.judge.screen.JudgeScreen`: it composes the form, fills
its choices from worker threads (discovered endpoints, listed models, the data set's loader, a prompt template file
— each a blocking call), and turns the form into a :class:`FormAuditConfig` (:meth:`collect`). Several judges: every
model ticked in the judge list, all on the chosen endpoint with the same settings (on the demo its simulated judge pool
``sim-judge*`` is offered). Prompt variants: the original prompt always, plus paper 002's seeded ``typo`` /
``newline`` perturbations (:func:`~relgate_tui.engine.judging.perturbed_variants`, seeded by the audit's seed as
``relgate judge audit --perturb`` does), the model-written ``paraphrase`` (its tick opens
:class:`~relgate_tui.tui.judge.paraphrase.ParaphrasePanel`: paraphraser model, "Write paraphrase", the editable
text that is then asked and stored) and an optional template file (``[NAME=]FILE``, read by
:func:`~relgate_tui.engine.judging.load_variant`). The side panel shows the data set and the plan (judge answers per
protocol × judges × variants, asked of the engine).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import Button, Checkbox, Input, Label, Select, SelectionList, Static

from relgate_tui.engine.judging.audit_run import JudgeAuditConfig
from relgate_tui.tui.forms import check_custom_endpoint, first_line, parse_number
from relgate_tui.tui.judge.direct_fields import DEFAULT_TOP_LOGPROBS, DirectFields, DirectSettings, paraphrase_refusal
from relgate_tui.tui.judge.paraphrase import ParaphrasePanel

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.setup import EndpointChoice
    from relgate_tui.engine.judging import PromptVariant
    from relgate_tui.engine.judging.data import AuditSet

CUSTOM = "custom"
DATA_FILE = "__file__"
PROTOCOLS = (("pairwise + direct scores", "both"), ("pairwise (both orders)", "pairwise"),
             ("direct scores", "direct"))
PERTURBATIONS = ("typo", "newline")  # the checkboxes: relgate_tui.engine.judging.variants.PERTURBATIONS


class TickBox(Checkbox):
    """A checkbox whose mark says on or off without colour (issue 31 item 25): "✓" ticked, blank unticked — the stock
    compact checkbox draws "X" in both states and tells them apart by colour only."""

    def render(self) -> Any:
        self.BUTTON_INNER = "✓" if self.value else " "
        return super().render()


class TickList(SelectionList[str]):
    """A selection list whose marks say selected or not without colour (issue 31 item 25): "✓" or blank, where the
    stock list draws "X" on every line."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        if len(segments) < 3 or segments[1].text != Checkbox.BUTTON_INNER or segments[1].style is None:
            return strip
        index = segments[1].style.meta.get("option")
        if not isinstance(index, int):
            return strip
        ticked = self.get_option_at_index(index).value in self.selected
        segments[1] = Segment("✓" if ticked else " ", segments[1].style, segments[1].control)
        return Strip(segments, strip.cell_length)


@dataclass(frozen=True)
class FormAuditConfig(JudgeAuditConfig):
    """The engine's options plus what the form read them from (``variant_file``: the template field's text,
    ``[NAME=]FILE``; ``paraphraser_model``: the paraphraser field), so the next visit restores the form exactly."""

    variant_file: str = ""
    paraphraser_model: str = ""


def variant_spec(text: str) -> str:
    """The template field as ``load_variant``'s ``NAME=FILE``: a bare path is named after its file (stem)."""
    name, sep, path = text.partition("=")
    if sep and re.fullmatch(r"[A-Za-z0-9_.-]+", name.strip()):
        return f"{name.strip()}={str(Path(path.strip()).expanduser())}"
    path = str(Path(text.strip()).expanduser())
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(path).stem).strip("-")[:40]
    return f"{stem or 'template'}={path}"


class JudgeSetup(Screen["JudgeAuditConfig | None"]):
    """The form (see the module docstring). Subclasses add the run and the results."""

    previous: JudgeAuditConfig | None
    endpoints: list[EndpointChoice]
    audit_set: AuditSet | None
    data_error: str
    file_variant: PromptVariant | None  # the template file's variant, read from the field's text ``variant_read``
    variant_read: str
    variant_error: str
    start_when_read: bool
    pending_judges: set[str]  # the last audit's judges not offered yet (ticked when they are)

    def _initial(self, field: str, default: str) -> str:
        """A field's starting text: the last audit's value, else ``default`` (None, e.g. "all inputs", is empty)."""
        if self.previous is None:
            return default
        value = getattr(self.previous, field)
        return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    def _previous_paraphrase(self) -> PromptVariant | None:
        kept = [v for v in self.previous.variants if v.name == "paraphrase"] if self.previous is not None else []
        return kept[0] if kept else None

    def _initial_direct(self) -> tuple[int, str, int]:
        """The direct fields' start: the last audit's (its log-probs only if it asked direct scores), else 5, 1–5
        score-only (direct_fields.DEFAULT_TOP_LOGPROBS)."""
        p = self.previous
        if p is None:
            return DEFAULT_TOP_LOGPROBS, "score-only", 5
        return p.top_logprobs if p.protocol != "pairwise" else DEFAULT_TOP_LOGPROBS, p.prompt, p.scale

    def _initial_data_path(self) -> str:
        from relgate_tui.engine.judging.data import bundled_audit_sets

        data = self.previous.data if self.previous is not None else ""
        return "" if data in {s.name for s in bundled_audit_sets()} else data


    def _compose_form(self) -> ComposeResult:
        with VerticalScroll(id="judge-form"):
            yield Label("Judge", classes="section")
            with Grid(classes="fields"):
                yield Label("endpoint")
                yield Select([], prompt="looking for local model servers…", id="endpoint", compact=True)
                yield Label("judge models", classes="listed")
                yield TickList(id="judges", compact=True, classes="listed")
                yield Label("URL", classes="custom")
                yield Input(self._initial("endpoint", ""), placeholder="http://host:port/v1", id="url", compact=True,
                            classes="custom")
                yield Label("model names", classes="custom")
                yield Input(self._initial_models(), placeholder="model id (several: comma-separated)",
                            id="model-name", compact=True, classes="custom")
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
                yield Label("prompt variants")
                with Horizontal(id="variants"):
                    yield Label("original", id="original")
                    kept = {v.name for v in self.previous.variants} if self.previous is not None else set()
                    for kind in PERTURBATIONS:
                        yield TickBox(kind, kind in kept, id=f"var-{kind}", compact=True,
                                      tooltip=f"paper 002's seeded {kind} perturbation of the prompts (seed: the "
                                              "audit's seed)")
                    yield TickBox("paraphrase", "paraphrase" in kept, id="var-paraphrase", compact=True,
                                  tooltip="paper 002's paraphrase, written by a paraphraser model; shown and "
                                          "editable below before the audit starts")
                yield Label("template file")
                yield Input(getattr(self.previous, "variant_file", ""), id="variant-file", compact=True,
                            placeholder="optional: [NAME=]path/to/template.txt or .json")
                yield Label("")
                yield Static("", id="variant-error")
            yield ParaphrasePanel(self._previous_paraphrase(), getattr(self.previous, "paraphraser_model", ""),
                                  id="paraphrase-panel")
            yield Label("Direct scores", classes="section direct")
            yield DirectFields(*self._initial_direct(), id="direct-fields", classes="fields direct")
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
        from relgate_tui.engine.certification.setup import endpoint_choices
        from relgate_tui.tui.demo_endpoint import demo_endpoint

        services = self.app.services  # type: ignore[attr-defined]
        return endpoint_choices(services.discover, services.embedded_demo,
                                lambda: demo_endpoint(self.app.ensure_demo()))  # type: ignore[attr-defined]

    @work(thread=True, exclusive=True, group="models", exit_on_error=False)
    def _list_models(self, base_url: str, api_key_env: str | None) -> tuple[str, ...]:
        from relgate_tui.engine.certification.setup import list_models

        return list_models(base_url, api_key_env)

    @work(thread=True, exclusive=True, group="data", exit_on_error=False)
    def _load_data(self, name_or_path: str) -> AuditSet:
        from relgate_tui.engine.judging.data import load_audit_set

        return load_audit_set(name_or_path)

    @work(thread=True, exclusive=True, group="variant", exit_on_error=False)
    def _read_variant(self, text: str) -> tuple[str, PromptVariant | None, str]:
        """(the field's text, its variant or None, the one-line error): a file is read here, never on the loop."""
        from relgate_tui.engine.judging import load_variant
        from relgate_tui.errors import RelgateError

        try:
            return text, load_variant(variant_spec(text)), ""
        except RelgateError as exc:
            return text, None, first_line(exc)


    # ---------------------------------------------------------------------------------- setup: populating
    def _set_endpoints(self, endpoints: list[EndpointChoice]) -> None:
        self.endpoints = endpoints
        select = self.query_one("#endpoint", Select)
        options = [(f"{e.label} — {e.error}" if e.error else e.label, f"ep{i}") for i, e in enumerate(endpoints)]
        select.set_options([*options, ("Custom URL (OpenAI-compatible)…", CUSTOM)])
        select.prompt = "choose an endpoint"
        from relgate_tui.engine.certification.setup import default_endpoint_index

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

    def _initial_models(self) -> str:
        return ", ".join(j.model for j in self.previous.judges()) if self.previous is not None else ""

    def _set_models(self, models: tuple[str, ...]) -> None:
        """Offer ``models`` as judges; keep the ticks still offered and tick the last audit's judges when first
        offered (the demo's pool is listed after its first judge); with none ticked, ``sim-judge`` (or the first)."""
        judges = self.query_one("#judges", SelectionList)
        ticked = (set(judges.selected) | self.pending_judges) & set(models)
        self.pending_judges -= set(models)
        if not ticked and models:
            ticked = {"sim-judge" if "sim-judge" in models else models[0]}
        judges.clear_options().add_options([(m, m, m in ticked) for m in models])

    def _listed(self, listed: tuple[str, ...]) -> None:
        """Models listed by the endpoint: on a simulated endpoint only its judges (``sim-judge``, ``sim-judge-*``)."""
        endpoint = self._chosen_endpoint()
        if endpoint is None or not endpoint.simulated:
            self._set_models(listed)
            return
        judges = endpoint.judge_models or ("sim-judge",)
        pool = [m for m in listed if m not in judges and m.startswith(tuple(f"{j}-" for j in judges))]
        self._set_models((*judges, *pool))

    def _ticked_models(self) -> list[str]:
        """The ticked judges in list order (the first is the config's ``model``)."""
        judges = self.query_one("#judges", SelectionList)
        ticked = set(judges.selected)
        return [str(judges.get_option_at_index(i).value) for i in range(judges.option_count)
                if judges.get_option_at_index(i).value in ticked]

    def _set_data_sets(self) -> None:
        from relgate_tui.engine.judging.data import bundled_audit_sets

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
            if (endpoint.simulated or not endpoint.models) and endpoint.base_url and not endpoint.error:
                self._list_models(endpoint.base_url, None)  # the demo lists its simulated judge pool
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

    @on(Input.Submitted, "#variant-file")
    @on(Input.Blurred, "#variant-file")
    def _variant_file_entered(self) -> None:
        text = self._value("variant-file")
        if text and text != self.variant_read:
            self._read_variant(text)

    def _variant_read_done(self, ok: bool, result: Any, error: BaseException | None) -> None:
        """The template file's worker ended: keep its variant or show its one-line error under the field."""
        text, variant, message = result if ok else (self._value("variant-file"), None, first_line(error or "unreadable"))
        start, self.start_when_read = self.start_when_read, False
        if text != self._value("variant-file"):
            return  # the field changed meanwhile: this read is stale
        self.file_variant, self.variant_read, self.variant_error = variant, text, message
        self.query_one("#variant-error", Static).update(Text(message, style="bold red"))
        self._update_plan()
        if start and not message:
            self.action_start()  # type: ignore[attr-defined]

    @on(Input.Changed)
    @on(Select.Changed, "#criterion, #protocol, #prompt")
    @on(SelectionList.SelectedChanged, "#judges")
    @on(Checkbox.Changed)
    @on(ParaphrasePanel.Changed)
    def _form_changed(self, event: Any) -> None:
        if isinstance(event, Input.Changed) and event.input.id == "variant-file":
            self.query_one("#variant-error", Static).update("")
        self._toggle_paraphrase()
        self._update_plan()

    def _toggle_paraphrase(self) -> None:
        panel = self.query_one(ParaphrasePanel)
        panel.display = self.query_one("#var-paraphrase", Checkbox).value
        protocol = str(self.query_one("#protocol", Select).value)
        for w in self.query(".direct"):
            w.display = protocol != "pairwise"
        if protocol != panel.protocol:
            panel.set_protocol(protocol)

    @on(Button.Pressed, "#para-generate")
    def _write_paraphrase(self) -> None:
        """Ask the paraphraser (the field's model, else the demo's ``sim-paraphraser`` on a simulated endpoint, else
        the first judge) on the judges' endpoint, with the audit's seed and request cache."""
        from relgate_tui.demo.paraphraser import PARAPHRASER_MODEL
        from relgate_tui.engine.judging.paraphrase import paraphraser
        from relgate_tui.errors import RelgateError

        panel = self.query_one(ParaphrasePanel)
        try:
            url, models, env, _ = self._endpoint_fields()
            seed = self._number("seed", "seed", int, lo=0)
            why = paraphrase_refusal(self._direct(), str(self.query_one("#protocol", Select).value))
            if why:
                raise ValueError(why)
            endpoint = self._chosen_endpoint()
            simulated = endpoint is not None and endpoint.simulated
            model = panel.model() or (PARAPHRASER_MODEL if simulated else models[0])
            judge = paraphraser(url, model, env)
        except (ValueError, RelgateError) as exc:
            self.query_one("#para-error", Static).update(Text(first_line(exc), style="bold red"))
            return
        cache = Path(self.app.services.resolved_cache_dir()) / "samples"  # type: ignore[attr-defined]
        panel.write(judge, str(self.query_one("#protocol", Select).value), seed, cache)

    def _toggle_rows(self) -> None:
        custom = self.query_one("#endpoint", Select).value == CUSTOM
        for w in self.query(".custom"):
            w.display = custom
        for w in self.query(".listed"):
            w.display = not custom
        file_data = self.query_one("#data", Select).value == DATA_FILE
        for w in self.query(".datafile"):
            w.display = file_data
        self._toggle_paraphrase()

    def _direct(self) -> DirectSettings:
        """The direct fields' settings, or the CLI's defaults for a pairwise-only audit (direct_fields)."""
        if str(self.query_one("#protocol", Select).value) == "pairwise":
            return DirectSettings()
        return self.query_one(DirectFields).settings()

    # -------------------------------------------------------------------------------------- setup: collect
    def _value(self, wid: str) -> str:
        return self.query_one(f"#{wid}", Input).value.strip()

    def _number(self, wid: str, name: str, kind: type, **limits: Any) -> Any:
        return parse_number(self._value(wid), name, kind, **limits)

    def _endpoint_fields(self) -> tuple[str, list[str], str | None, str]:
        """(base URL, judge models, API-key variable name, label shown for the endpoint)."""
        if self.query_one("#endpoint", Select).value == CUSTOM:
            url, model, env = check_custom_endpoint(self._value("url"), self._value("model-name"),
                                                    self._value("api-key-env"),
                                                    model_question="which model should judge?")
            models = [m.strip() for m in model.split(",") if m.strip()]
            if not models:
                raise ValueError("model names: which model should judge?")
            return url, models, env, url
        endpoint = self._chosen_endpoint()
        if endpoint is None:
            raise ValueError("endpoint: choose an endpoint (still looking? wait a second)")
        if endpoint.error or not endpoint.base_url:
            raise ValueError(f"endpoint: {endpoint.label} is not usable ({endpoint.error or 'no URL'})")
        chosen = self._ticked_models()
        if not chosen:
            raise ValueError("judge models: tick at least one model (space toggles)")
        return endpoint.base_url, chosen, None, endpoint.label

    def _variants(self, criterion: str, seed: int, direct: DirectSettings) -> tuple[PromptVariant, ...]:
        """The variants after the original: the ticked perturbations (of the audit's direct prompt, as the CLI's
        ``--perturb``), the paraphrase as edited (refused as the CLI refuses it off the 1–5 score-only prompt), then
        the template file's."""
        from relgate_tui.engine.judging import geval, perturbed_variants

        kinds = [k for k in PERTURBATIONS if self.query_one(f"#var-{k}", Checkbox).value]
        template = geval.direct_template(direct.prompt, direct.scale)
        out = tuple(perturbed_variants(kinds, seed=seed, criterion=criterion, direct=template)) if kinds else ()
        if self.query_one("#var-paraphrase", Checkbox).value:
            why = paraphrase_refusal(direct, str(self.query_one("#protocol", Select).value))
            if why:
                raise ValueError(why)
            out = (*out, self.query_one(ParaphrasePanel).variant())
        text = self._value("variant-file")
        if not text:
            return out
        if text != self.variant_read:
            raise ValueError("template file: press Enter to read it")
        if self.file_variant is None:
            raise ValueError(f"template file: {self.variant_error}")
        return (*out, self.file_variant)

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

    def collect(self) -> tuple[FormAuditConfig, str]:
        """The form as a :class:`FormAuditConfig` and the endpoint's label; ValueError (one line) otherwise."""
        direct = self._direct()  # first, so its inline error shows while the rest is still being filled in
        url, models, env, label = self._endpoint_fields()
        data = self._data_name()
        criterion = self.query_one("#criterion", Select).value
        if not isinstance(criterion, str):
            raise ValueError("criterion: choose a criterion (the data set is still loading?)")
        seed = self._number("seed", "seed", int, lo=0)
        cfg = FormAuditConfig(
            data=data, criterion=criterion, endpoint=url, model=models[0], api_key_env=env,
            protocol=str(self.query_one("#protocol", Select).value),
            reps=self._number("reps", "repetitions k", int, lo=1, hi=50),
            inputs=self._number("n-inputs", "inputs", int, lo=1, optional=True),
            candidates=self._number("n-candidates", "candidates / input", int, lo=2, optional=True),
            alpha=self._number("alpha", "α", float, lo=0, hi=1, lo_open=True, hi_open=True),
            seed=seed, variants=self._variants(criterion, seed, direct), variant_file=self._value("variant-file"),
            top_logprobs=direct.top_logprobs, prompt=direct.prompt, scale=direct.scale, max_tokens=direct.max_tokens,
            paraphraser_model=self.query_one(ParaphrasePanel).model(),
            cache_dir=str(self.app.services.resolved_cache_dir() / "samples"),  # type: ignore[attr-defined]
            store=True, store_dir=str(self.app.services.resolved_runs_dir().parent / "audits"),  # type: ignore[attr-defined]
        )
        first = cfg.judges()[0]  # every judge on the chosen endpoint with the same settings
        cfg = replace(cfg, more_judges=tuple(replace(first, model=m) for m in models[1:]))
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
        from relgate_tui.engine.judging import planned_answers, select
        from relgate_tui.engine.judging.audit import planned_requests

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
        spec = cfg.to_spec()
        n_judges, n_variants = len(spec.judges), len(spec.variants)
        answers = planned_answers(inputs, cfg.protocol, cfg.reps, n_variants)
        calls = planned_requests(inputs, cfg.protocol, cfg.reps, n_variants)
        t = Text()
        t.append(f"{len(inputs)} inputs", style="bold")
        t.append(f" · {cfg.reps} repetitions each\n")
        t.append(f"{n_judges} judge{'s' * (n_judges != 1)} × {n_variants} prompt variant{'s' * (n_variants != 1)}",
                 style="bold")
        t.append(f" ({', '.join(v.name for v in spec.variants)})\n", style="dim")
        for name, n in answers.items():
            t.append(f"{name:<10}", style="dim")
            t.append(f"{n * n_judges:,} judge answers", style="bold")
            t.append(f" in {calls[name] * n_judges:,} calls\n" if calls[name] != n else "\n", style="dim")
        if len(answers) > 1:  # the results count calls: say the sum they are to be read against (issue 31 item 25)
            t.append(f"{'in all':<10}", style="dim")
            t.append(f"{sum(answers.values()) * n_judges:,} judge answers", style="bold")
            t.append(f" in {sum(calls.values()) * n_judges:,} calls\n", style="dim")
        total_calls, total_answers = sum(calls.values()) * n_judges, sum(answers.values()) * n_judges
        why = ""
        if total_calls != total_answers:  # direct scores: one call asks all the repetitions of a candidate
            why = (f" (a direct request asks its {cfg.reps} repetitions in one call; a server that answers one at a "
                   f"time — llama.cpp — takes one call per answer: {total_answers:,})")
        t.append(f"the results' calls made + cached add up to {total_calls:,}{why}; answers already stored or in "
                 "the request cache cost no call", style="dim italic")
        plan.update(t)

