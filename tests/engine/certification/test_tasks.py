"""Task loading (SPEC §6): bundled tasks, JSONL/CSV files, and one-line errors naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.engine.certification.tasks import TaskError, bundled_tasks, format_task_table, load_task
from relgate_tui.engine.transport.prompts import item_messages


def test_bundled_tasks_meet_the_minimum_sizes() -> None:
    sizes = {t.name: t.items for t in bundled_tasks()}
    assert sizes["bigbench-3digit-addition"] == 200
    assert sizes["bigbench-2digit-multiplication"] == 200
    assert sizes["gsm8k"] >= 300
    assert sizes["mmlu"] >= 500
    assert sizes["truthfulqa-mc"] >= 100


@pytest.mark.parametrize("name", [t.name for t in bundled_tasks()])
def test_every_bundled_task_loads_with_references_and_its_canonicalizer(name: str) -> None:
    from relgate_tui.core.canon import canonicalize_references, get_canonicalizer

    task = load_task(name)
    entry = next(t for t in bundled_tasks() if t.name == name)
    assert len(task.items) == entry.items and task.canon == entry.canon
    canon = get_canonicalizer(task.canon)
    for item in task.items:
        if not entry.references:  # the registry says so: a task a person verifies (issue 31 item 1)
            assert not item.answers, item.id
            continue
        assert item.answers, item.id
        assert canonicalize_references(canon, item.answers, item.choices), item.id


def test_the_demo_ships_a_task_without_references_its_judge_can_verify(incli, tmp_path: Path) -> None:
    """Judge-assisted certification works on the demo out of the box (issue 31 item 1): one bundled task has no
    reference answers, the verification judge is asked about every sampled item, and the simulated judge knows the
    answers (it agrees with the truth far more often than a coin flip)."""
    import operator

    from relgate_tui.demo.server import DemoServer

    entry = next(t for t in bundled_tasks() if not t.references)
    server = DemoServer(port=0).start()
    try:
        out = tmp_path / "doc.json"
        result = incli(tmp_path, "certify", "--task", entry.name, "--endpoint", server.base_url, "--model", "sim-mid",
                       "--limit", "40", "--k-max", "5", "--verify-judge-model", "sim-judge", "--quiet",
                       "--json", str(out))
    finally:
        server.stop()
    assert result.returncode in (0, 1, 3), result.stderr
    doc = json.loads(out.read_text())
    block = doc["judge_assisted"]
    assert block["population"].startswith("every sampled item") and block["n_judged"] >= 35
    ops = {"plus": operator.add, "minus": operator.sub, "times": operator.mul}
    questions = {it.id: it.question for it in load_task(entry.name).items}
    tops = {it["id"]: it["classes"][0]["answer"] for it in doc["items"] if it["classes"]}
    agree = 0
    for row in block["verdicts"]:
        a, op, b = questions[row["id"]].rstrip("?.").split()[-3:]
        truth = tops.get(row["id"]) == str(ops[op](int(a), int(b)))
        agree += int(row["judge"] == int(truth))
    assert agree >= 0.8 * len(block["verdicts"])


def test_truthfulqa_answers_are_shuffled_not_all_a() -> None:
    task = load_task("truthfulqa-mc")
    assert len({item.answers[0] for item in task.items}) >= 4


def test_task_table_lists_every_bundled_task() -> None:
    table = format_task_table()
    for t in bundled_tasks():
        assert t.name in table and str(t.items) in table


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def test_jsonl_file_with_all_field_kinds(tmp_path: Path) -> None:
    rows = [
        {"id": 1, "question": "What is 2+2?", "answer": 4},
        {"id": "q2", "question": "Capital of France?", "choices": ["London", "Paris"], "answer": "Paris"},
        {"id": "q3", "messages": [{"role": "user", "content": "Say hi"}], "acceptable_answers": ["hi", "hello"]},
        {"id": "q4", "question": "Unverified item"},
    ]
    path = _write(tmp_path, "t.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    task = load_task(str(path))
    assert [i.id for i in task.items] == ["1", "q2", "q3", "q4"]
    assert task.items[0].answers == ("4",)
    assert task.items[1].choices == ("London", "Paris")
    assert task.items[2].question == "Say hi" and task.items[2].answers == ("hi", "hello")
    assert task.items[3].answers == ()
    assert task.canon == "mcq" and len(task.sha256) == 64
    assert item_messages(task.items[2], system="Be brief.")[0] == {"role": "system", "content": "Be brief."}


def test_csv_file_with_lists(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "t.csv",
        'id,question,answer,acceptable_answers,choices\n'
        'a,"What is 1,000 + 1?",1001,,\n'
        'b,Pick the city,,"[""Paris""]",London|Paris\n',
    )
    task = load_task(str(path))
    assert task.items[0].question == "What is 1,000 + 1?" and task.items[0].answers == ("1001",)
    assert task.items[1].choices == ("London", "Paris") and task.items[1].answers == ("Paris",)


def test_numeric_task_file_suggests_numeric(tmp_path: Path) -> None:
    path = _write(tmp_path, "n.jsonl", '{"id": 1, "question": "q", "answer": "1,000"}\n')
    assert load_task(str(path)).canon == "numeric"


def test_mcq_prompt_lists_lettered_options() -> None:
    item = load_task("mmlu").items[0]
    content = item_messages(item)[-1]["content"]
    assert "\nA. " in content and "\nD. " in content and content.endswith("Answer with the letter of the correct option.")


ERROR_CASES = [
    ("missing-file", None, None, "no such task file"),
    ("bad.jsonl", '{"id": 1, "question": "ok"}\n{"id": 2, "question": "x"\n', ":2:", "bad JSON"),
    ("noq.jsonl", '{"id": 1, "question": "ok"}\n{"id": 2, "answer": "3"}\n', ":2:", "question: missing"),
    ("dup.jsonl", '{"id": 1, "question": "a"}\n{"id": "1", "question": "b"}\n', ":2:", "id: duplicate id '1'"),
    ("noid.jsonl", '{"question": "a"}\n', ":1:", "id: missing"),
    ("badid.jsonl", '{"id": [1], "question": "a"}\n', ":1:", "id: expected a string or integer"),
    ("qtype.jsonl", '{"id": 1, "question": 5}\n', ":1:", "question: expected a string"),
    ("choices.jsonl", '{"id": 1, "question": "a", "choices": "A|B"}\n', ":1:", "choices: expected a list of strings"),
    ("answer.jsonl", '{"id": 1, "question": "a", "answer": {"x": 1}}\n', ":1:", "answer: expected a string or number"),
    ("accept.jsonl", '{"id": 1, "question": "a", "acceptable_answers": "x"}\n', ":1:", "acceptable_answers: expected a list"),
    ("msgs.jsonl", '{"id": 1, "messages": [{"role": "user"}]}\n', ":1:", "messages: every message needs"),
    ("array.jsonl", '[1, 2]\n', ":1:", "expected a JSON object"),
    ("empty.jsonl", "", None, "empty task file"),
    ("blank.jsonl", "\n  \n\n", None, "empty task file"),
    ("latin1.jsonl", b'{"id": 1, "question": "ok"}\n{"id": 2, "question": "caf\xe9"}\n', ":2:", "not UTF-8"),
    ("tasks.txt", "id,question\n1,a\n", None, "unknown task file type"),
    ("empty.csv", "", None, "empty task file"),
    ("noqcol.csv", "id,prompt\n1,a\n", ":1:", "question: missing column"),
    ("dup.csv", "id,question\n1,a\n1,b\n", ":3:", "id: duplicate id '1'"),
    ("csvq.csv", "id,question\n1,\n", ":2:", "question: missing"),
    ("csvlist.csv", 'id,question,choices\n1,a,"[""x"""\n', ":2:", "choices: bad JSON list"),
]


@pytest.mark.parametrize(("name", "content", "where", "message"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_bad_task_files_give_one_line_errors(tmp_path: Path, name: str, content, where, message: str) -> None:
    path = tmp_path / name if content is None else _write(tmp_path, name, content)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(TaskError) as err:
        load_task(str(path))
    text = str(err.value)
    assert "\n" not in text
    assert message in text
    assert name in text  # names the file
    if where:
        assert f"{name}{where}" in text  # and the line
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing is written
