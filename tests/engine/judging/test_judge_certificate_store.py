"""Issue 41 §5 and §3/§6 at the command line: certificates no one can swap — the id is the content's digest, load
refuses an edit, a FAIL or a threshold outside [½, 1]; no command's output may be written into the store; ``judge
apply`` names its certificate as an input and decides nothing on shifted items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.engine.judging.certificate_doc import CertificateDoc, content_id
from relgate_tui.engine.runs.outputs import check_output_path
from relgate_tui.errors import UserError
from tests.cli.test_judge_certificate_cli import _write


@pytest.fixture
def certified(tmp_path: Path, incli) -> tuple[Path, str, Path]:
    """(verdicts file, certificate id, its stored file) of a PASS certificate of judge m1."""
    f = _write(tmp_path / "v.jsonl")
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(f), "--judge-model", "m1", "--json", "-")
    assert r.returncode == 0, r.stderr
    cert_id = json.loads(r.stdout)["id"]
    path = tmp_path / "judge_certificates" / f"{cert_id}.json"
    assert path.exists()
    return f, cert_id, path


def test_the_id_is_the_digest_of_the_content(certified) -> None:
    _, cert_id, path = certified
    raw = json.loads(path.read_text())
    assert raw["id"] == cert_id == content_id(raw) and len(cert_id) == 3 + 24
    doc = CertificateDoc.from_json(raw)
    assert doc.to_json() == raw and doc.with_id().id == cert_id


def test_no_output_of_any_command_may_write_into_the_store(tmp_path: Path, incli, certified, monkeypatch) -> None:
    f, cert_id, path = certified
    before = path.read_bytes()
    new = _write(tmp_path / "new.jsonl", n=50, labelled=0, seed=9)
    other = tmp_path / "judge_certificates" / "jc-000000000000000000000000.json"
    for argv in (("judge", "apply", cert_id, "--verdicts", str(new), "--judge-model", "m1", "--json", str(path)),
                 ("judge", "certify", "--verdicts", str(f), "--json", str(path)),
                 ("judge", "certify", "--verdicts", str(f), "--markdown", str(other)),
                 ("judge", "certify", "--plan", "--expect", "0.95", "--json", str(other))):
        r = incli(tmp_path, *argv)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and "judge certificates' store" in lines[0], (argv, r.stderr)
    assert path.read_bytes() == before and not other.exists()
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with pytest.raises(UserError, match="judge certificates' store"):  # what `batch write --out` checks first
        check_output_path(tmp_path / "judge_certificates" / "requests.jsonl")


def test_apply_names_its_certificate_file_as_an_input(tmp_path: Path, incli, certified) -> None:
    _, cert_id, path = certified
    outside = tmp_path / "mine.json"
    outside.write_bytes(path.read_bytes())
    new = _write(tmp_path / "new.jsonl", n=50, labelled=0, seed=9)
    r = incli(tmp_path, "judge", "apply", str(outside), "--verdicts", str(new), "--judge-model", "m1", "--json",
              str(outside))
    assert r.returncode == 2 and "refusing to write over an input file" in r.stderr
    assert json.loads(outside.read_text())["id"] == cert_id


def _forge(path: Path, **changes: object) -> None:
    raw = json.loads(path.read_text())
    sel = dict(raw["selective"])
    for key, value in changes.items():
        if key in sel:
            sel[key] = value
        else:
            raw[key] = value
    raw["selective"] = sel
    raw["id"] = content_id(raw)  # even with the digest recomputed the certificate must not apply
    path.write_text(json.dumps(raw))


@pytest.mark.parametrize(("edit", "message"), [
    ({"threshold": -1.0}, "outside [0.5, 1]"),
    ({"verdict": "FAIL", "threshold": 0.0}, "is FAIL, not PASS"),
    ({"threshold": 0.5}, "not the last step its sequence passed"),
    ({"threshold": "abc"}, "selective.threshold: expected a number"),
])
def test_a_forged_certificate_is_refused_in_one_line_and_nothing_applied(tmp_path: Path, incli, certified, edit,
                                                                         message) -> None:
    _, _, path = certified
    forged = tmp_path / "forged.json"
    forged.write_bytes(path.read_bytes())
    _forge(forged, **edit)
    out = tmp_path / "apply.json"
    new = _write(tmp_path / "new.jsonl", n=50, labelled=0, seed=9)
    r = incli(tmp_path, "judge", "apply", str(forged), "--verdicts", str(new), "--judge-model", "m1", "--json",
              str(out))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and message in lines[0] and not out.exists(), r.stderr


def test_an_edit_under_the_same_id_or_a_renamed_certificate_is_refused(tmp_path: Path, incli, certified) -> None:
    _, cert_id, path = certified
    raw = json.loads(path.read_text())
    new = _write(tmp_path / "new.jsonl", n=50, labelled=0, seed=9)
    twin = path.with_name("jc-111111111111111111111111.json")
    twin.write_text(path.read_text())
    raw["selective"]["threshold"] = 0.5  # a hand edit that would decide more items, id kept
    path.write_text(json.dumps(raw))
    for ref in (cert_id, "jc-111111111111111111111111"):
        r = incli(tmp_path, "judge", "apply", ref, "--verdicts", str(new), "--judge-model", "m1")
        assert r.returncode == 2 and "does not match its id" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert r.stdout == ""


def test_shifted_items_are_not_decided_and_one_line_says_why(tmp_path: Path, incli, certified) -> None:
    _, cert_id, _ = certified
    shifted = tmp_path / "shifted.jsonl"
    shifted.write_text("".join(json.dumps({"id": f"s{i}", "p_yes": 0.99}) + "\n" for i in range(50)))
    out = tmp_path / "apply.json"
    r = incli(tmp_path, "judge", "apply", cert_id, "--verdicts", str(shifted), "--judge-model", "m1", "--json",
              str(out))
    doc = json.loads(out.read_text())
    assert r.returncode == 0 and doc["n_decided"] == 0 and doc["n_escalated"] == 50
    assert "outside the certificate's coverage" in doc["shift_note"]
    assert len([line for line in r.stderr.splitlines() if "outside the certificate's coverage" in line]) == 1
