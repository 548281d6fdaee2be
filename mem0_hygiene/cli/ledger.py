"""The ``ledger`` command group: ``ledger migrate --to postgresql://...`` (a SQLite ledger into PostgreSQL)."""

from __future__ import annotations

import click

from .group import StoreOptions, cli, emit, hygiene_command, json_option, store_options


@cli.group()
def ledger() -> None:
    """The hygiene ledger itself (hygiene.ledger_path / hygiene.ledger_url)."""


@ledger.command()
@store_options
@click.option(
    "--to",
    "to_url",
    required=True,
    metavar="postgresql://USER:PASSWORD@HOST/DB",
    help="The PostgreSQL database to copy the ledger into (empty; add ?options=-csearch_path%3DNAME for a schema).",
)
@json_option()
@hygiene_command
def migrate(store: StoreOptions, to_url: str, as_json: bool) -> None:
    """Copy the SQLite ledger into PostgreSQL, verified by counts and a checksum per table.

    Stop the app (every replica) first: rows written to the file meanwhile are not copied. The file is left
    as it is. Prints the config change to make: hygiene.ledger_url instead of hygiene.ledger_path.
    """
    from ..actions.ledger_migrate import migrate_ledger

    emit(migrate_ledger(store.load(), to_url), as_json)
