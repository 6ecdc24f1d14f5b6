"""An installed (non-editable) wheel finds the bundled tasks (SPEC §2): build it offline, import from it."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_wheel_ships_assets_and_finds_every_bundled_task(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    wheel = next(out.glob("relgate_tui-*.whl"))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert "relgate_tui/_assets/tasks.json" in names
        assert "relgate_tui/_assets/NOTICE.md" in names
        z.extractall(site)
    code = (
        "import json, relgate_tui\n"
        "from relgate_tui.engine.certification.tasks import bundled_tasks, load_task\n"
        "print(json.dumps({'file': relgate_tui.__file__,"
        " 'tasks': {t.name: [t.items, len(load_task(t.name).items)] for t in bundled_tasks()}}))\n"
    )
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path, env=env)
    data = json.loads(result.stdout)
    assert data["file"].startswith(str(site))  # imported from the wheel, not the checkout
    assert len(data["tasks"]) >= 5
    for name, (registered, loaded) in data["tasks"].items():
        assert registered == loaded > 0, name
