"""``tuvan graph``: the communities of the indexed pages' link graph (bot.knowledge.link_graph)."""

from __future__ import annotations

import json

import click

from bot.cli.common import pass_settings, with_runtime
from bot.core.settings import Settings
from bot.runtime import Runtime


@click.command("graph")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
@pass_settings
def graph_command(settings: Settings, as_json: bool) -> None:
    """Find the communities of the link graph of the indexed pages, for search mode
    hybrid+graph. Run it after `tuvan crawl` or `tuvan ingest` changed the pages."""
    # Here, not at the top: networkx takes most of a second to import, for this command only.
    from bot.knowledge.link_graph import find_communities

    async def body(rt: Runtime) -> None:
        report = await find_communities(rt.sessionmaker, settings.search.graph)
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "documents": report.documents,
                        "pages_with_links": report.pages,
                        "links": report.links,
                        "internal_links": report.internal,
                        "navigation": report.navigation,
                        "edges": report.edges,
                        "communities": report.communities,
                    },
                    ensure_ascii=False,
                )
            )
            return
        click.echo(report.describe())
        for target in report.navigation[:10]:
            click.echo(f"  navigation: {target}")
        if not report.communities:
            click.echo(
                "no communities: no two indexed pages link to each other, so hybrid+graph "
                "ranks as hybrid does"
            )

    with_runtime(settings, body, check_index=False)
