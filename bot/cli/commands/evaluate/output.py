"""What the ``tuvan eval`` commands give: the report printed, and written with its plots when
``--out`` names a folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click


def show_report(
    out: Path | None, data: dict[str, Any], markdown: str, plots: Callable[[Path], Any]
) -> None:
    from bot.evaluation.report import write_report

    click.echo(markdown)
    if out is not None:
        write_report(out, data, markdown, plots)
        click.echo(f"\nreport.json, report.md and plots written to {out}", err=True)
