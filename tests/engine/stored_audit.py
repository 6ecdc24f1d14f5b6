"""A real stored audit for the hardening tests: a small direct audit against the loopback log-prob judge."""

from __future__ import annotations

import os
from pathlib import Path

from relgate_tui.engine.judging import list_audits
from relgate_tui.engine.judging.audit_run import JudgeAuditConfig, audit_result
from tests.engine.logprob_server import LogprobJudge


def stored_audit(home: Path, data: str = "hanna") -> Path:
    """Run a 2-input direct audit into ``home/audits`` and return its directory."""
    before = os.environ.get("RELGATE_HOME")
    os.environ["RELGATE_HOME"] = str(home)
    try:
        with LogprobJudge() as server:
            audit_result(JudgeAuditConfig(data=data, criterion="Coherence", endpoint=server.base_url,
                                          model="lp-judge", protocol="direct", reps=1, inputs=2, candidates=2,
                                          store=True))
        (audit,) = list_audits(home / "audits")
    finally:
        if before is None:
            os.environ.pop("RELGATE_HOME", None)
        else:
            os.environ["RELGATE_HOME"] = before
    return Path(audit.path)
