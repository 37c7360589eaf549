"""``tuvan eval calibrate``: tier 1's coverage at each risk target on your FAQ, and the
documents tier's t_doc on a questions file, stored for the embedder with ``--save``."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bot.cli.commands.evaluate.faq import evaluate_faq_file
from bot.cli.commands.evaluate.inputs import DIR, FILE, knowledge_of, server_option
from bot.cli.common import pass_settings, progress_bars, run, user_errors, with_runtime
from bot.core.settings import Settings
from bot.runtime import Runtime, build_parts

if TYPE_CHECKING:
    from bot.evaluation.calibration import DocPoint
    from bot.evaluation.metrics import Choice


@click.command("calibrate")
@click.argument("faq_file", type=FILE)
@click.argument("queries_file", type=FILE)
@click.option(
    "--questions",
    "questions_file",
    type=FILE,
    help="Also choose t_doc on this questions file (with --corpus or --chunks).",
)
@click.option("--corpus", type=DIR)
@click.option("--chunks", type=FILE)
@click.option(
    "--doc-precision",
    default=0.90,
    show_default=True,
    type=float,
    help="Precision the documents tier must keep.",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option(
    "--save",
    is_flag=True,
    help="Store the chosen t_doc in the live index for the current embedder.",
)
@server_option
@pass_settings
def eval_calibrate(
    settings: Settings,
    faq_file: Path,
    queries_file: Path,
    questions_file: Path | None,
    corpus: Path | None,
    chunks: Path | None,
    doc_precision: float,
    out: Path | None,
    save: bool,
    server_url: str | None,
) -> None:
    """Tier 1's coverage at each risk target on your FAQ (its threshold calibrates itself),
    and t_doc: the most coverage that keeps the documents tier's required precision."""
    from bot.evaluation.calibration import Calibration
    from bot.evaluation.faq_report import faq_plots
    from bot.evaluation.questions_report import doc_calibration_plot
    from bot.evaluation.report import prepare_out, write_json

    evaluation = evaluate_faq_file(settings, faq_file, queries_file, server_url)
    calibration = Calibration(evaluation.embedder, evaluation.written.per_risk)
    if questions_file is not None:
        doc_choice, doc_points = _calibrate_doc(
            settings, questions_file, corpus, chunks, doc_precision, server_url
        )
        calibration = replace(
            calibration, doc=doc_choice, doc_precision=doc_precision, doc_points=doc_points
        )
    for line in calibration.lines():
        click.echo(line)
    chosen = calibration.chosen
    for key, value in chosen.items():
        click.echo(f"TUVAN_ANSWER__{key.upper()}={value:.3f}")
    if out is not None:
        prepare_out(out)
        write_json(out, calibration.to_json())
        faq_plots(evaluation, out)
        if calibration.doc is not None:
            doc_calibration_plot(calibration.doc_points, calibration.doc, out)
    if save:
        _save(settings, chosen)


def _calibrate_doc(
    settings: Settings,
    questions_file: Path,
    corpus: Path | None,
    chunks: Path | None,
    required: float,
    server_url: str | None,
) -> tuple[Choice, list[DocPoint]]:
    from bot.evaluation.calibration import calibrate_t_doc
    from bot.evaluation.data import read_questions

    with user_errors():
        questions = read_questions(questions_file)
        knowledge = knowledge_of(corpus, chunks, None)
        parts = build_parts(settings)

    async def main() -> tuple[Choice, list[DocPoint]]:
        with progress_bars() as bars:
            return await calibrate_t_doc(
                parts,
                questions,
                knowledge,
                required_precision=required,
                server_url=server_url,
                progress=bars,
            )

    return run(main())


def _save(settings: Settings, chosen: dict[str, float]) -> None:
    from bot.evaluation.calibration import store_thresholds

    if not chosen:
        click.echo("nothing to save: no threshold met its required precision", err=True)
        sys.exit(1)

    async def body(rt: Runtime) -> None:
        await store_thresholds(rt.sessionmaker, chosen)
        click.echo(
            f"saved for {rt.parts.embedder.name}: "
            + ", ".join(f"{k} {v:.3f}" for k, v in chosen.items())
        )

    with_runtime(settings, body)
