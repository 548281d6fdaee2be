"""The ``reads`` command: which answers a memory could have influenced, and when (the read log of
``hygiene.read_log: true``). Thin over :func:`mem0_hygiene.actions.reads.read_log`."""

from __future__ import annotations

import click

from .group import StoreOptions, cli, emit, hygiene_command, json_option, output_options, store_options


def _scope(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, ident = value.partition("=")
        if not sep or not ident or key not in ("user", "agent", "run"):
            raise click.BadParameter(f"{value!r}: write it as user=ID, agent=ID or run=ID", param_hint="--scope")
        out[f"{key}_id"] = ident
    return out


@cli.command()
@store_options
@click.option("--memory", "memory_id", metavar="ID", help="The reads that served this memory (when, to whom).")
@click.option(
    "--scope",
    "scope",
    multiple=True,
    metavar="KEY=ID",
    help="The memories served to this scope: user=ID, agent=ID or run=ID (repeat to combine).",
)
@click.option("--since", metavar="TIME", help="Only reads at or after this ISO time (e.g. 2026-08-01).")
@json_option()
@output_options
@hygiene_command
def reads(store: StoreOptions, memory_id: str | None, scope: tuple[str, ...], since: str | None, as_json: bool) -> None:
    """Which answers a memory could have influenced, and when; or what a scope was served.

    Reads the ledger's read log, kept when the app's config has hygiene.read_log: true (each search, get_all
    and get records the ids it served, the scope asked for and the read's source= label). Read-only: works
    while the app runs.
    """
    from ..actions.reads import read_log

    emit(read_log(store.load(), memory_id=memory_id, scope=_scope(scope), since=since), as_json)
