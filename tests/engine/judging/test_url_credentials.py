"""Issue 23 §5: a URL's credentials are never stored or printed — one redaction (core.redact.public_url) at every
edge: a stored audit's manifest and its id, an imported log's endpoint (run manifest, results.json, --json), the
embeddings endpoint in jury's error lines. Real sockets, real files, the real CLI (``cli.main`` in the test's process,
its output read at file descriptors 1 and 2: ``incli``)."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest

from tests.conftest import InProcessCli

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "imports" / "lm_eval" / "addition"
SECRET = "hunter2secret"


def _all_text(root: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def test_a_judge_url_with_credentials_stays_out_of_the_stored_audit_and_its_id(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, incli: InProcessCli) -> None:
    from relgate_tui.engine.judging import list_audits
    from relgate_tui.engine.judging.audit_run import JudgeAuditConfig, audit_result
    from tests.engine.logprob_server import LogprobJudge

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with LogprobJudge() as server:
        url = server.base_url.replace("http://", f"http://judge:{SECRET}@")
        audit_result(JudgeAuditConfig(data="hanna", criterion="Coherence", endpoint=url, model="lp-judge",
                                      protocol="direct", reps=1, inputs=2, candidates=2, store=True))
    (audit,) = list_audits()
    assert SECRET not in _all_text(tmp_path / "audits")
    manifest = json.loads((Path(audit.path) / "manifest.json").read_text())
    assert manifest["spec"]["judges"][0]["endpoint"] == server.base_url.rstrip("/")
    r = incli(tmp_path, "audits", audit.id, "--json", "-")
    assert r.returncode == 0 and SECRET not in r.stdout + r.stderr


def test_judge_query_credentials_are_redacted_in_the_spec() -> None:
    from relgate_tui.engine.judging.ask import Judge

    d = Judge(f"http://127.0.0.1:9/v1?api_key={SECRET}", "m").to_json()
    assert SECRET not in json.dumps(d) and "api_key=[redacted]" in d["endpoint"]


def test_an_imported_logs_base_url_credentials_never_reach_the_run_or_the_output(tmp_path: Path,
                                                                                  incli: InProcessCli) -> None:
    src = tmp_path / "log"
    shutil.copytree(FIX, src)
    for results in src.glob("results_*.json"):
        text = results.read_text().replace("http://127.0.0.1:34261/", f"http://user:{SECRET}@127.0.0.1:34261/")
        text = text.replace("/v1/chat/completions", f"/v1/chat/completions?api_key={SECRET}")
        assert SECRET in text
        results.write_text(text)
    samples = next(src.glob("samples_*.jsonl"))
    out = tmp_path / "doc.json"
    r = incli(tmp_path, "import", "lm-eval", str(samples), "--run-dir", str(tmp_path / "runs"), "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert SECRET not in out.read_text() + r.stdout + r.stderr
    assert SECRET not in _all_text(tmp_path / "runs")
    assert json.loads(out.read_text())["imported_from"]["endpoint"].startswith("http://127.0.0.1:34261/v1")


def test_jury_never_prints_the_embeddings_password(tmp_path: Path, incli: InProcessCli) -> None:
    from tests.cli.test_jury_cli import _scores_file

    pool = _scores_file(tmp_path, n=40)
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = incli(tmp_path, "jury", "--scores", str(pool), "--quiet", "--embeddings-model", "e",
             "--embeddings-endpoint", f"http://user:{SECRET}@127.0.0.1:{port}/v1?key={SECRET}")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "embeddings endpoint http://127.0.0.1" in r.stderr and SECRET not in r.stderr + r.stdout
