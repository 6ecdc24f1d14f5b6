"""Issue 33 §2, §6, §7 and the one-look mode, end to end through ``relgate certify`` over the demo server, on a
reference-less task with a verification judge: no verified item → no number and exit 3 (not decided); a labels file
with a gap in the seeded order → the assisted bound uses the prefix only and the CLI and JSON say how many labels were
left out; ``--one-look N`` → undecided (exit 3) before N labels, in the run id and the saved config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.demo.server import DemoServer
from relgate_tui.engine.certification.certify import open_prepared
from tests.engine.review.conftest import write_labels

N_ITEMS = 24


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    home = tmp_path_factory.mktemp("issue33")
    lines = Path(__file__).resolve().parents[2].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines][:N_ITEMS]
    task = home / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    mp = pytest.MonkeyPatch()
    mp.setenv("RELGATE_HOME", str(home))
    mp.delenv("RELGATE_DB", raising=False)
    with DemoServer() as server:
        yield {"home": home, "task": task, "truth": {it["id"]: it["answer"] for it in items},
               "args": ["certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid",
                        "--canon", "numeric", "--k-max", "6", "--seed", "2", "--min-reliability", "0.5"]}
    mp.undo()


def _verdicts(doc: dict, truth: dict[str, str]) -> dict[str, str]:
    out = {}
    for it in doc["items"]:
        if it["role"] == "calibration":
            classes = [c["answer"] for c in it["classes"]]
            out[it["id"]] = str(classes.index(truth[it["id"]]) + 1) if truth[it["id"]] in classes else "none"
    return out


@pytest.mark.parametrize("extra", [[], ["--verify-judge-model", "sim-judge"]])
def test_no_verified_item_gives_null_and_exit_3(world, extra, capsys):
    out = world["home"] / f"none{len(extra)}.json"
    rc = main(world["args"] + extra + ["--json", str(out)])
    doc = json.loads(out.read_text())
    err = capsys.readouterr().err
    assert rc == 3, err
    assert doc["reliability_level"] is None and doc["reliability_lower_bound"] is None and doc["passed"] is None
    assert doc["gate"]["level"] is None and doc["gate"]["value"] is None
    assert "no verified items yet" in err and "0.0%" not in err.splitlines()[0]


def test_labels_with_a_gap_use_the_prefix_and_say_so(world, capsys):
    first = world["home"] / "none2.json"
    if not first.exists():
        main(world["args"] + ["--verify-judge-model", "sim-judge", "--json", str(first)])
    doc = json.loads(first.read_text())
    verdicts = _verdicts(doc, world["truth"])
    order = open_prepared(world["home"] / "runs" / doc["run_id"]).calibration_ids
    assert len(order) >= 6
    gap = {k: v for k, v in verdicts.items() if k != order[2]}  # the third item of the seeded order unlabelled
    labels = write_labels(world["home"] / "gap.jsonl", gap)
    out = world["home"] / "gap.json"
    capsys.readouterr()
    main(world["args"] + ["--verify-judge-model", "sim-judge", "--labels", str(labels), "--json", str(out)])
    err = capsys.readouterr().err
    block = json.loads(out.read_text())["judge_assisted"]
    assert block["n_labels"] == 2 and block["left_out"] == len(gap) - 2
    assert f"{len(gap) - 2} later labels left out" in block["left_out_note"] and block["left_out_note"] in err
    assert "note" in block["agreement"]["kappa"]
    from relgate_tui.engine.certification.report import report_markdown

    assert block["left_out_note"] in report_markdown(json.loads(out.read_text()))


def test_one_look_waits_for_its_labels_and_is_in_the_run_id(world, capsys):
    first = json.loads((world["home"] / "none0.json").read_text())
    verdicts = _verdicts(first, world["truth"])
    some = dict(list(verdicts.items())[:3])
    labels = write_labels(world["home"] / "three.jsonl", some)
    out = world["home"] / "look.json"
    rc = main(world["args"] + ["--one-look", str(len(verdicts)), "--labels", str(labels), "--json", str(out)])
    doc = json.loads(out.read_text())
    assert rc == 3 and doc["passed"] is None and doc["run_id"] != first["run_id"]
    assert doc["gate"]["watch"] == "one-look" and doc["gate"]["planned_labels"] == len(verdicts)
    assert f"one-look at {len(verdicts)} labels, 3 so far" in doc["gate"]["summary"]
    # the same labels without a one-look plan: a person labelled, so the gate is the anytime bound
    out2 = world["home"] / "anytime.json"
    main(world["args"] + ["--labels", str(labels), "--json", str(out2)])
    assert json.loads(out2.read_text())["gate"]["watch"] == "anytime"


def test_population_items_is_a_run_of_its_own_and_every_sampled_item_is_judged(world):
    """Issue 33 §4: every sampled item is judged (calibration and deployment: N = the run's size); ``--population
    items`` bounds the N judged items themselves (no Clopper–Pearson step), is saved in the block and the run id."""
    path = world["home"] / "none2.json"
    if not path.exists():
        main(world["args"] + ["--verify-judge-model", "sim-judge", "--json", str(path)])
    first = json.loads(path.read_text())
    verdicts = _verdicts(first, world["truth"])
    labels = write_labels(world["home"] / "all.jsonl", verdicts)
    judge = ["--verify-judge-model", "sim-judge", "--labels", str(labels)]
    task_out, items_out = world["home"] / "task.json", world["home"] / "items.json"
    main(world["args"] + judge + ["--json", str(task_out)])
    main(world["args"] + judge + ["--population", "items", "--json", str(items_out)])
    task, items = json.loads(task_out.read_text()), json.loads(items_out.read_text())
    assert task["judge_assisted"]["n_judged"] == N_ITEMS == items["judge_assisted"]["n_judged"]
    assert task["judge_assisted"]["bound_on"] == "task" and items["judge_assisted"]["bound_on"] == "items"
    assert items["run_id"] != task["run_id"]
    assert items["judge_assisted"]["lower_bound"] >= task["judge_assisted"]["lower_bound"]
