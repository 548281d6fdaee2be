"""Store-location commands: ``where`` and ``relocate``."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from . import (
    StoreOptions,
    cli,
    console_for_output,
    human_size,
    hygiene_command,
    store_options,
    yes_no,
)

# --------------------------------------------------------------------------------------------- where


@cli.command()
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the locations as JSON.")
@hygiene_command
def where(store: StoreOptions, as_json: bool) -> None:
    """Show where the memories live: vector store, history.db, ledger, mem0's folder.

    For each local path: the filesystem behind it, whether it is RAM-backed (tmpfs: gone at reboot)
    or under /tmp, whether it exists, and its size.
    """
    from ..stores.locations import resolve_locations

    locations = resolve_locations(store.load())
    if as_json:
        click.echo(json.dumps([loc.to_dict() for loc in locations], indent=2))
        return
    table = Table(title="mem0 store locations")
    for column in ("role", "provider", "path / remote", "filesystem", "volatile", "under /tmp", "exists", "size"):
        table.add_column(column, overflow="fold")
    for loc in locations:
        where_ = loc.path or loc.remote or "-"
        if loc.defaulted:
            where_ += " (default)"
        if loc.collection:
            where_ += f" [collection {loc.collection}]"
        fs = "-"
        if loc.filesystem is not None:
            fs = loc.filesystem.fstype
            if loc.filesystem.target:
                fs += f" on {loc.filesystem.target}"
        table.add_row(
            loc.role, loc.provider, escape(where_), fs,
            "[bold red]yes[/]" if loc.volatile else "no",
            "[yellow]yes[/]" if loc.under_tmp else "no",
            yes_no(loc.exists if loc.is_local else None),
            human_size(loc.size_bytes),
        )
    console = console_for_output()
    console.print(table)
    for loc in locations:
        if loc.note:
            console.print(f"note: {loc.role}: {escape(loc.note)}")
        if loc.role == "mem0_dir" or not loc.is_local:
            continue
        if loc.volatile:
            console.print(f"[bold red]warning[/]: {loc.role} is on {loc.filesystem.fstype if loc.filesystem else '?'}"
                          f" (RAM): {escape(str(loc.path))} is lost at the next reboot")
        elif loc.under_tmp:
            console.print(f"[yellow]warning[/]: {loc.role} is under a temp folder: {escape(str(loc.path))} "
                          "may be cleaned up by the system")
    if any(loc.at_risk for loc in locations if loc.role in ("vector_store", "history_db", "ledger")):
        console.print("fix: mem0-hygiene relocate --to DIR [--with-sqlite], then use the printed config")


# --------------------------------------------------------------------------------------------- relocate


@cli.command()
@store_options
@click.option("--to", "to_dir", required=True, type=click.Path(file_okay=False),
              help="Destination folder: the store goes to DIR/qdrant (SQLite files keep their names).")
@click.option("--with-sqlite", is_flag=True, help="Also move mem0's history.db and the ledger (VACUUM INTO).")
@click.option("--dry-run", is_flag=True, help="Check and show what would move; write nothing.")
@click.option("--remove-source", is_flag=True, help="Delete the old copy once the new one is verified.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@hygiene_command
def relocate(store: StoreOptions, to_dir: str, with_sqlite: bool, dry_run: bool, remove_source: bool,
             as_json: bool) -> None:
    """Move a local Qdrant store (and with --with-sqlite, history.db and the ledger) to DIR.

    Refuses while another process has the store open. Copies, verifies point counts and a sample of
    payloads, then prints the config to use from now on. The old copy stays unless --remove-source.
    """
    from ..actions.relocate import relocate as do_relocate

    result = do_relocate(store.load(), to_dir, include_sqlite=with_sqlite, dry_run=dry_run,
                         remove_source=remove_source)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    console = console_for_output()
    verb = "would copy" if result.dry_run else "copied"
    for move in result.moves:
        counts = ", ".join(f"{k}={v}" for k, v in move.counts_before.items()) or "empty"
        console.print(f"{move.role}: {verb} {escape(move.source)} -> {escape(move.destination)} ({counts})")
        if not result.dry_run:
            checks = [f"counts match ({', '.join(f'{k}={v}' for k, v in move.counts_after.items()) or 'empty'})"]
            if move.sampled:
                checks.append(f"{move.sampled} sampled points identical")
            if move.integrity:
                checks.append(f"integrity_check {move.integrity}")
            console.print("  verified: " + "; ".join(checks))
            if move.source_removed:
                console.print(f"  removed the old copy at {escape(move.source)}")
            elif move.note:
                console.print(f"  [yellow]{escape(move.note)}[/]")
            else:
                console.print(f"  the old copy at {escape(move.source)} is untouched")
    for reason in result.skipped:
        console.print(f"skipped: {escape(reason)}")
    if result.dry_run:
        console.print("dry run: nothing was written; after the move, use this in your mem0 config:")
    else:
        console.print("use this in your mem0 config from now on (merge it into the dict given to Memory.from_config):")
    click.echo(json.dumps(result.config_snippet, indent=2))
