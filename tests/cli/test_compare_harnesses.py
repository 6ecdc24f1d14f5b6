"""The same model under two harnesses compares (issue 31 item 3): an lm-eval run whose prompts are rendered
("Q: …\\nA:") and an Inspect run of the same items (raw input) pair by item identity — document, id, reference —
with a note that the prompts differ; items that differ (another reference) are refused; a run compared with itself
says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from relgate_tui.engine.runs.listing import list_runs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


def _import(incli, home: Path, kind: str, path: Path) -> str:
    before = {r.run_id for r in list_runs(home / "runs")}
    result = incli(home, "import", kind, str(path), "--quiet")
    assert result.returncode == 0, result.stderr
    (new,) = {r.run_id for r in list_runs(home / "runs")} - before
    return new


def _rendered_lm_eval(tmp_path: Path, answer_shift: int = 0) -> Path:
    """The fixture's lm-eval log with a 'Q: …\\nA:' prompt template (as lm-eval's own task configs render them)."""
    src = FIXTURES / "lm_eval" / "addition"
    out = tmp_path / f"lm_rendered_{answer_shift}"
    shutil.copytree(src, out)
    (samples,) = out.glob("samples_*.jsonl")
    rows = []
    for line in samples.read_text().splitlines():
        row = json.loads(line)
        (prompt,) = row["arguments"]["gen_args_0"]["arg_0"]
        messages = json.loads(prompt)
        messages[-1]["content"] = f"Q: {messages[-1]['content']}\nA:"
        row["arguments"]["gen_args_0"]["arg_0"] = [json.dumps(messages)]
        if answer_shift:
            row["target"] = str(int(row["target"]) + answer_shift)
            row["doc_hash"] = row["doc_hash"][::-1]
        rows.append(json.dumps(row))
    samples.write_text("\n".join(rows) + "\n")
    return out


def test_lm_eval_and_inspect_runs_of_one_task_compare_with_a_note(incli, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    lm = _import(incli, home, "lm-eval", _rendered_lm_eval(tmp_path))
    ins = _import(incli, home, "inspect", FIXTURES / "inspect" / "addition_zstd.eval")
    out = home / "cmp.json"
    result = incli(home, "compare", lm, ins, "--json", str(out))
    assert result.returncode in (0, 1, 3), result.stderr
    doc = json.loads(out.read_text())
    assert doc["n_shared"] == doc["run_b"]["items"] == 8  # every item of the Inspect run paired
    assert doc["n_prompts_differ"] == 8
    assert "note: the prompts differ on 8 of 8 paired items" in result.stderr

    result = incli(home, "compare", ins, ins, "--json", str(out))
    assert result.returncode in (0, 3)
    assert "A and B are the same run" in result.stderr
    assert json.loads(out.read_text())["notes"][0].startswith("A and B are the same run")


def test_both_harnesses_sending_q_a_get_no_prompt_note(incli, tmp_path: Path) -> None:
    """lm-eval's "Q: {{question}}\nA:" and Inspect's prompt_template("Q: {prompt}\nA:") (addition_qa.eval, written by
    inspect_ai 0.3.285, whose ``sample.input`` stays the raw question) sent the models the same wording: no note."""
    home = tmp_path / "home"
    home.mkdir()
    lm = _import(incli, home, "lm-eval", _rendered_lm_eval(tmp_path))
    ins = _import(incli, home, "inspect", FIXTURES / "inspect" / "addition_qa.eval")
    out = home / "cmp.json"
    result = incli(home, "compare", lm, ins, "--json", str(out))
    assert result.returncode in (0, 1, 3), result.stderr
    doc = json.loads(out.read_text())
    assert doc["n_shared"] == 8 and doc["n_prompts_differ"] == 0
    assert doc["notes"] == [] and "prompts differ" not in result.stderr and "wording" not in result.stderr

    from relgate_tui.engine.importers.inspect_log import load_inspect

    log = load_inspect(FIXTURES / "inspect" / "addition_qa.eval")
    first = log.items[0]
    assert first.question == "What is 576 plus 770?"  # the item is its raw input (how compare pairs it)
    assert first.messages == ({"role": "user", "content": "Q: What is 576 plus 770?\nA:"},)  # what the model saw
    assert all(not it.messages for it in load_inspect(FIXTURES / "inspect" / "addition_zstd.eval").items)


def test_items_with_another_reference_are_refused(incli, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    other = _import(incli, home, "lm-eval", _rendered_lm_eval(tmp_path, answer_shift=1))
    ins = _import(incli, home, "inspect", FIXTURES / "inspect" / "addition_zstd.eval")
    result = incli(home, "compare", other, ins)
    assert result.returncode == 2
    assert "8 of 8 paired items ask different questions" in result.stderr
