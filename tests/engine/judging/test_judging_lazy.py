"""engine/judging's public names load on first use (PEP 562): ``relgate certify`` checks its verification-judge
options through :mod:`.verify_judge` without importing the audits and studies (issue 32 §6)."""

from __future__ import annotations

import inspect
import subprocess
import sys

import relgate_tui.engine.judging as judging


def test_every_public_name_resolves_and_ask_is_the_function() -> None:
    for name in judging.__all__:
        assert getattr(judging, name) is not None, name
    import relgate_tui.engine.judging.ask  # noqa: F401  (the submodule of the same name must not shadow it)

    assert callable(judging.ask) and not inspect.ismodule(judging.ask)
    from relgate_tui.engine.judging import AuditStore, run_audit
    from relgate_tui.engine.judging.audit import run_audit as direct
    from relgate_tui.engine.judging.store import AuditStore as store_direct

    assert run_audit is direct and AuditStore is store_direct


def test_the_verification_judge_check_does_not_import_the_audits() -> None:
    code = ("import sys; from relgate_tui.engine.judging.verify_judge import check_options; "
            "print(sorted(m for m in ('relgate_tui.engine.judging.audit', 'relgate_tui.engine.judging.results', "
            "'relgate_tui.engine.judging.store') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
