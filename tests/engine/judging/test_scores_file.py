"""Judge scores files (issue 9 item 5): JSONL and CSV, one-line errors naming file, line and field."""

from __future__ import annotations

import json
import math
import os

import pytest

from relgate_tui.engine.judging.scores_file import ScoreRow, load_scores, table_from_records
from relgate_tui.errors import DataError, RelgateError


def _jsonl(tmp_path, rows, name="s.jsonl"):
    p = tmp_path / name
    p.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return p


def test_jsonl_round_trip_and_accessors(tmp_path):
    rows = [
        {"id": "a", "judge": "j1", "criterion": "coh", "human": 3.5, "score": 4,
         "logprobs": {"1": -5, "2": -3.5, "3": -1.2, "4": -0.5, "5": -2}, "input": "src", "output": "out",
         "source": "dse"},
        {"id": "a", "judge": "j2", "criterion": "coh", "humans": [3, 4, 4], "score": 3},
        {"id": 7, "judge": "j1", "criterion": "coh", "score": 2, "variant": "typo"},
    ]
    t = load_scores(_jsonl(tmp_path, rows))
    assert len(t) == 3 and t.judges() == ["j1", "j2"] and t.criteria() == ["coh"]
    assert t.variants() == ["original", "typo"] and t.ids() == ["a", "7"] and t.scale() == (1, 2, 3, 4, 5)
    a2 = t.get("a", "j2", "coh")
    assert a2 is not None and a2.humans == (3.0, 4.0, 4.0) and a2.human == pytest.approx(11 / 3)
    assert a2.logprobs is None and a2.line == 2
    a1 = t.get("a", "j1", "coh")
    assert a1 is not None and dict(a1.logprobs) == {1: -5.0, 2: -3.5, 3: -1.2, 4: -0.5, 5: -2.0}
    assert t.select(judge="j1").ids() == ["a", "7"] and len(t.select(variant="typo")) == 1
    again = table_from_records([r.to_record() for r in t.rows])
    assert [r.to_record() for r in again.rows] == [r.to_record() for r in t.rows]


def test_defaults_for_optional_names(tmp_path):
    t = load_scores(_jsonl(tmp_path, [{"id": "x", "score": 1}]))
    r = t.rows[0]
    assert (r.judge, r.criterion, r.variant, r.human, r.logprobs) == ("judge", "overall", "original", None, None)


def test_csv_with_logprob_and_rater_columns(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("id,judge,criterion,score,lp_1,lp_2,lp_3,human_1,human_2,output,extra\n"
                 "i1,j,c,2,-3,-0.2,-inf,2,3,\"a, b\",zz\n"
                 ",,,,,,,,,,\n"
                 "i2,j,c,,-1,-1,-1.5,,,,\n", encoding="utf-8")
    t = load_scores(p)
    assert t.ids() == ["i1", "i2"]
    r1, r2 = t.rows
    assert r1.score == 2 and r1.logprobs[3] == -math.inf and r1.humans == (2.0, 3.0) and r1.human == 2.5
    assert r1.output == "a, b" and r1.line == 2
    assert r2.score is None and r2.human is None and r2.line == 4


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        ({"score": 1}, "id", "missing"),
        ({"id": True, "score": 1}, "id", "missing"),
        ({"id": "a", "score": "4"}, "score", "expected a number"),
        ({"id": "a", "score": float("nan")}, "score", "finite"),
        ({"id": "a", "score": 1, "human": "x"}, "human", "expected a number"),
        ({"id": "a", "score": 1, "humans": 3}, "humans", "list"),
        ({"id": "a", "score": 1, "humans": [1, None]}, "humans", "null"),
        ({"id": "a", "logprobs": [1, 2]}, "logprobs", "object"),
        ({"id": "a", "logprobs": {}}, "logprobs", "empty"),
        ({"id": "a", "logprobs": {"four": -1}}, "logprobs", "not an integer"),
        ({"id": "a", "logprobs": {"4": "x"}}, "logprobs", "not a number"),
        ({"id": "a", "logprobs": {"4": 0.5}}, "logprobs", "≤ 0"),
        ({"id": "a", "logprobs": {"4": -1, " 4": -2}}, "logprobs", "twice"),
        ({"id": "a"}, "score", "score or logprobs"),
        ({"id": "a", "score": 1, "judge": 3}, "judge", "string"),
        ({"id": "a", "score": 1, "criterion": ["c"]}, "criterion", "string"),
        ({"id": "a", "score": 1, "variant": 1}, "variant", "string"),
        ({"id": "a", "score": 1, "source": {}}, "source", "string"),
        ({"id": "a", "score": 1, "input": 5}, "input", "string"),
        ({"id": "a", "score": 1, "output": "x" * 200_001}, "output", "too long"),
    ],
)
def test_each_field_error_is_one_line_naming_file_line_and_field(tmp_path, row, field, words):
    p = _jsonl(tmp_path, [{"id": "ok", "score": 1}, row])
    with pytest.raises(DataError) as info:
        load_scores(p)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{p}:2: field '{field}': ") and words in msg
    assert isinstance(info.value, RelgateError)


def test_duplicate_key_names_the_first_line(tmp_path):
    p = _jsonl(tmp_path, [{"id": "a", "score": 1}, {"id": "b", "score": 1}, {"id": "a", "score": 2}])
    with pytest.raises(DataError, match=r":3: field 'id': duplicate row .*\(first on line 1\)"):
        load_scores(p)


@pytest.mark.parametrize(
    ("content", "words"),
    [("{not json\n", ":1: bad JSON"), ("[1, 2]\n", ":1: expected a JSON object"), ("\n\n", "no rows"),
     (b"\xff\xfe\x00", "not UTF-8")],
)
def test_bad_files(tmp_path, content, words):
    p = tmp_path / "bad.jsonl"
    (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)
    with pytest.raises(DataError, match=words):
        load_scores(p)


def test_bad_csv(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("judge,score\nj,1\n")
    with pytest.raises(DataError, match=r":1: field 'id': missing column"):
        load_scores(p)
    p.write_text("id,score\na,high\n")
    with pytest.raises(DataError, match=r":2: field 'score': not a number"):
        load_scores(p)
    p.write_text("id,score\na,1,2\n")
    with pytest.raises(DataError, match=r":2: more cells"):
        load_scores(p)


def test_paths_that_are_not_regular_files(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        load_scores(tmp_path / "nope.jsonl")
    with pytest.raises(DataError, match="not a regular file"):
        load_scores(tmp_path)
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo.jsonl"
        os.mkfifo(fifo)
        with pytest.raises(DataError, match="not a regular file"):
            load_scores(fifo)


def test_rows_are_frozen():
    r = ScoreRow(id="a", score=1.0)
    with pytest.raises(AttributeError):
        r.score = 2.0  # type: ignore[misc]


def test_a_null_score_is_no_score_for_that_judge_and_item_and_is_counted(tmp_path):
    rows = [{"id": "a", "judge": "j1", "score": 4, "human": 4}, {"id": "a", "judge": "j2", "score": None, "human": 4},
            {"id": "b", "judge": "j1", "score": None}, {"id": "b", "judge": "j2", "score": 2}]
    t = load_scores(_jsonl(tmp_path, rows))
    assert len(t) == 4 and t.unscored() == 2
    r = t.get("a", "j2", "overall")
    assert r is not None and r.score is None and r.logprobs is None and r.human == 4
    note = t.unscored_note()
    assert note is not None and note.startswith("2 of 4 rows have a null score") and "\n" not in note
    again = table_from_records([r.to_record() for r in t.rows])  # written back as "score": null
    assert again.unscored() == 2 and [r.to_record() for r in again.rows] == [r.to_record() for r in t.rows]
    assert load_scores(_jsonl(tmp_path, [{"id": "x", "score": 1}], name="ok.jsonl")).unscored_note() is None
    p = tmp_path / "s.csv"
    p.write_text("id,judge,score\ni1,j,3\ni2,j,\n", encoding="utf-8")
    assert load_scores(p).unscored() == 1


def test_a_table_is_held_column_by_column_not_as_a_row_object_each(tmp_path) -> None:
    """Issue 29: a million-row scores file took 1.67 GB (an object per row, with its floats and log-prob map).
    Rows are now columns (about 100 bytes a row: the id string and packed numbers); this bounds what a loaded table
    holds per row, measured by tracemalloc (allocation counts, not time)."""
    import gc
    import tracemalloc

    n = 20_000
    p = tmp_path / "big.jsonl"
    with p.open("w") as f:
        for i in range(n):
            lps = ",".join(f'"{v}":-{(i * v) % 7 + 0.25}' for v in range(1, 6))
            f.write(f'{{"id":"d{i}","judge":"j","criterion":"c","human":{1 + i % 5},"score":{1 + i % 5},'
                    f'"logprobs":{{{lps}}}}}\n')
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    t = load_scores(p)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(t) == n and t.rows[n - 1].logprobs[5] == -((n - 1) * 5 % 7 + 0.25)
    assert held / n < 200, f"{held / n:.0f} bytes per row"
