"""``relgate tasks``: the bundled tasks."""

from __future__ import annotations

import argparse
from typing import Any

NAME = "tasks"
ORDER = 3
EXIT_OK = 0


def register(sub: Any) -> None:
    sub.add_parser(NAME, help="list the bundled tasks")


def run(args: argparse.Namespace) -> int:
    from relgate_tui.engine.certification.tasks import format_task_table

    print(format_task_table())
    return EXIT_OK
