"""Setup screen: endpoints (discovered first, embedded demo pre-selected and labelled), task list and file errors,
suggested canonicalizer, verification default, pre-flight box, validation, dismissed values."""

from __future__ import annotations

from textual.widgets import Input, Select

from relgate_tui.engine.certification.setup import RunSetup
from relgate_tui.engine.transport.discovery import DiscoveredServer
from relgate_tui.tui.app import make_app
from relgate_tui.tui.home import HomeScreen
from relgate_tui.tui.setup import CUSTOM, TASK_FILE, SetupScreen
from tests.tui.test_flow import focus_on, wait_until


async def open_setup(app, pilot):
    await pilot.press("n")
    setup = app.screen
    assert isinstance(setup, SetupScreen)
    await wait_until(pilot, lambda: setup.task_info is not None and bool(setup.endpoints), timeout=30,
                     what="the setup form")
    return setup


async def test_embedded_demo_is_preselected_and_suggestions_follow_the_task(services):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        setup = await open_setup(app, pilot)
        demo = setup.endpoints[0]
        assert demo.simulated and "simulated" in demo.label and demo.base_url == app.demo.base_url
        assert setup.query_one("#endpoint", Select).value == "ep0"
        assert setup.query_one("#model", Select).value == "sim-mid"
        assert setup.query_one("#verification", Select).value == "auto"  # one default, relgate certify's (issue 37 §3)
        assert setup.query_one("#canon", Select).value == "numeric"
        names = [t.name for t in setup.tasks]
        assert "mmlu" in names and all(t.n_items > 0 for t in setup.tasks)

        setup.query_one("#task", Select).value = "mmlu"
        await pilot.pause()
        assert setup.query_one("#canon", Select).value == "mcq"  # suggested from the task
        pre = str(setup.query_one("#preflight").content)
        assert "500 items" in pre and "10,000 calls" in pre  # worst case = 500 × 20

        setup.query_one("#k-max", Input).value = "5"
        await pilot.pause()
        assert "2,500 calls" in str(setup.query_one("#preflight").content)

        # a canonicalizer the user picked is kept when the task changes
        setup.query_one("#canon", Select).value = "text"
        await pilot.pause()
        setup.query_one("#task", Select).value = "gsm8k"
        await pilot.pause()
        assert setup.query_one("#canon", Select).value == "text"


async def test_bad_task_file_error_is_shown_inline_and_blocks_start(services, tmp_path):
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"id": "q1", "question": "2+2?", "answer": "4"}\n{"id": "q1", "question": "again"}\n')
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        setup = await open_setup(app, pilot)
        setup.query_one("#task", Select).value = TASK_FILE
        await pilot.pause()
        path_input = setup.query_one("#task-path", Input)
        assert path_input.display
        path_input.value = str(bad)
        await focus_on(pilot, path_input)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        message = str(setup.query_one("#task-info").content)
        assert "items.jsonl:2" in message and "duplicate" in message and "\n" not in message.strip()
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SetupScreen)  # refused
        assert "items.jsonl:2" in str(setup.query_one("#setup-error").content)

        good = tmp_path / "good.jsonl"
        good.write_text('{"id": "q1", "question": "What is 2 + 3?", "answer": "5"}\n'
                        '{"id": "q2", "question": "What is 7 + 8?", "answer": "15"}\n')
        path_input.value = str(good)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert setup.task_info is not None and setup.task_info.n_items == 2
        await pilot.press("ctrl+s")
        await pilot.pause()
        chosen = app.history[-1][1]
        assert isinstance(chosen, RunSetup) and chosen.task == str(good)


async def test_discovered_servers_first_and_custom_url_validation(services):
    services.discover = lambda: [DiscoveredServer("Ollama", "http://127.0.0.1:11434/v1", ("llama3.2:1b", "qwen2.5:0.5b"))]
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        setup = await open_setup(app, pilot)
        labels = [e.label for e in setup.endpoints]
        assert labels[0].startswith("Ollama") and setup.endpoints[-1].simulated  # real servers listed first
        assert setup.query_one("#endpoint", Select).value == "ep0"
        assert setup.query_one("#model", Select).value == "llama3.2:1b"
        assert setup.query_one("#verification", Select).value == "auto"

        setup.query_one("#endpoint", Select).value = CUSTOM
        await pilot.pause()
        assert setup.query_one("#url", Input).display
        setup.query_one("#url", Input).value = "127.0.0.1:8080"
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SetupScreen)
        assert "URL" in str(setup.query_one("#setup-error").content)
        setup.query_one("#url", Input).value = "http://127.0.0.1:8080/v1"
        setup.query_one("#model-name", Input).value = "my-model"
        setup.query_one("#api-key-env", Input).value = "sk-live-abc123-secret"
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SetupScreen)
        assert "NAME" in str(setup.query_one("#setup-error").content)
        setup.query_one("#api-key-env", Input).value = "MY_API_KEY"
        setup.query_one("#alpha", Input).value = "0.7"
        await pilot.press("ctrl+s")
        assert "α" in str(setup.query_one("#setup-error").content)
        setup.query_one("#alpha", Input).value = "0.2"
        await pilot.press("ctrl+s")
        await pilot.pause()
        chosen = app.history[-1][1]
        assert (chosen.base_url, chosen.model, chosen.api_key_env, chosen.alpha, chosen.simulated) == (
            "http://127.0.0.1:8080/v1", "my-model", "MY_API_KEY", 0.2, False)


async def test_escape_goes_home(services):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_setup(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert app.history[-1] == ("setup", None)


async def test_a_new_url_or_model_or_concurrency_drops_the_old_latency(services):
    """Issue 24 §2: the demo's measured latency never stands for a custom URL: typing one (or another model name, or
    another concurrency) drops the measurement — "not measured" until the probe measures the new endpoint."""
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        setup = await open_setup(app, pilot)
        setup.latency, setup.latency_parallel = (0.037, 20.0, 5.0), 8  # as if the demo had been measured
        setup._update_preflight()
        assert "37 ms per call, measured with 8 at once" in str(setup.query_one("#preflight").content)
        setup.query_one("#endpoint", Select).value = CUSTOM
        await pilot.pause()
        setup.query_one("#url", Input).value = "http://127.0.0.1:8080/v1"
        setup.query_one("#model-name", Input).value = "my-model"
        setup.query_one("#url", Input).focus()
        await pilot.pause()
        setup.latency = (0.037, 20.0, 5.0)  # measured once more, then the URL field is left
        setup.query_one("#model-name", Input).focus()
        await pilot.pause()
        box = str(setup.query_one("#preflight").content)
        assert setup.latency is None and "37 ms" not in box and "not measured" in box
        setup.query_one("#concurrency", Input).focus()
        await pilot.pause()
        setup.latency = (0.037, 20.0, 5.0)
        setup.query_one("#concurrency", Input).value = "2"
        await pilot.pause()
        assert setup.latency is not None  # not on a keystroke: once the field is left
        setup.query_one("#k-max", Input).focus()
        await pilot.pause()
        assert setup.latency is None and "not measured" in str(setup.query_one("#preflight").content)


async def test_choosing_a_verification_judge_remeasures_and_the_box_times_its_verdicts(services):
    """Issue 31 item 8: a verdict costs more than an answer on llama.cpp; a measurement made without the judge says
    nothing about its verdicts, so choosing one re-measures, and the box shows what a verdict costs."""
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        setup = await open_setup(app, pilot)
        setup.query_one("#verification", Select).value = "human"  # references verified by hand: the judge is asked
        setup.latency, setup.latency_parallel = (0.037, 20.0, 5.0), 4
        setup._update_preflight()
        assert "judge verdict" not in str(setup.query_one("#preflight").content)
        setup.query_one("#verify-judge-model", Select).value = "sim-judge"
        # dropped: the probe measures again, judge included
        await wait_until(pilot, lambda: setup.latency is None, what="the old measurement dropped")
        setup.latency = (0.037, 20.0, 5.0, 0.061)
        setup._update_preflight()
        box = str(setup.query_one("#preflight").content)
        assert "37 ms per call, measured with 4 at once" in box and "61 ms per judge verdict" in box
