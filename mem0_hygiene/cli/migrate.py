"""``migrate --to NEW_CONFIG``: every memory copied into another vector store (and ledger, and history.db),
verified, resumable; ``migrate --remove-source`` deletes the old store afterwards, saying what it deletes.

Thin over :func:`mem0_hygiene.actions.migrate.migrate` and
:func:`mem0_hygiene.actions.migrate_source.remove_migration_source`; ``--json`` prints the result's ``to_dict()``.
"""

from __future__ import annotations

import click

from .group import StoreOptions, cli, emit, hygiene_command, json_option, output_options, render_plain, store_options
from .progress import progress_shown


@cli.command()
@store_options
@click.option(
    "--to",
    "to_config",
    metavar="NEW_CONFIG",
    type=click.Path(dir_okay=False, exists=True),
    help="The config (JSON/YAML file or module:attr) of the store to copy into: empty, any supported provider.",
)
@click.option("--dry-run", is_flag=True, help="Show the plan (counts per scope, size, the destination, embedders).")
@click.option("--reembed", is_flag=True, help="Embed every text with the destination's embedder (a new model).")
@click.option("--remove-source", is_flag=True, help="Delete the store this deployment was migrated from.")
@click.option("--yes", is_flag=True, help="Do not ask before --remove-source deletes.")
@json_option()
@output_options
@hygiene_command
def migrate(
    store: StoreOptions,
    to_config: str | None,
    dry_run: bool,
    reembed: bool,
    remove_source: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Copy every memory into the store of --to NEW_CONFIG, verified; or delete the old one (--remove-source).

    Stop the app (every replica) first. Plans first (refusing a non-empty destination, or another embedder
    without --reembed), then copies points with their ids and vectors, the ledger (a SQLite ledger into a
    PostgreSQL hygiene.ledger_url by `ledger migrate`) and mem0's history, verifies by count, checksum and
    sampled queries, and prints the config to use. Interrupted, it is finished by running it again. The old
    store is left as it is and listed as a copy until `migrate --remove-source --config NEW_CONFIG`.
    """
    if remove_source:
        from ..actions.migrate_source import remove_migration_source

        config = store.load()
        plan = remove_migration_source(config, dry_run=True)
        if dry_run or not plan.paths:
            emit(plan, as_json)
            return
        if not yes:
            click.echo(render_plain(plan).replace("dry run: would delete", "about to delete").rstrip("\n"), err=True)
            if not click.confirm("Delete these files?", default=False, err=True):
                click.echo("nothing was deleted", err=True)
                return
        emit(remove_migration_source(config), as_json)
        return
    if not to_config:
        raise click.UsageError("give --to NEW_CONFIG (the store to copy into), or --remove-source")
    from ..actions.migrate import migrate as do_migrate
    from ..config_loader import load_config

    config = store.load()
    with progress_shown(as_json):
        result = do_migrate(config, load_config(to_config), dry_run=dry_run, reembed=reembed)
    emit(result, as_json)
