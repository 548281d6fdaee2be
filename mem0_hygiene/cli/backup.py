"""Backup, restore and erasure commands: ``backup``, ``restore`` and ``forget``.

Each is thin over the library function of the same name (:func:`mem0_hygiene.actions.backup.backup`,
:func:`mem0_hygiene.actions.restore.restore`, :func:`mem0_hygiene.actions.forget.forget`); ``--json`` prints the
result's ``to_dict()``, otherwise a short human summary.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from . import StoreOptions, cli, console_for_output, human_size, hygiene_command, store_options


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in counts.items()) or "empty"


def _print_backup(console: Console, result: Any) -> None:
    if result.dry_run:
        console.print(f"dry run: would back up into {escape(result.path)}")
    else:
        console.print(f"backed up into [bold]{escape(result.path)}[/]")
    console.print(f"  vector store: {escape(result.vector_store)}")
    counts = result.counts
    console.print(f"  points: {_counts(counts.get('points', {}))}; history.db rows: "
                  f"{_counts(counts.get('history', {}))}; ledger rows: {_counts(counts.get('ledger', {}))}")
    if result.integrity:
        checks = ", ".join(f"{escape(k)} {escape(v)}" for k, v in result.integrity.items())
        console.print(f"  integrity_check: {checks}")
    if not result.dry_run:
        size = human_size(result.size_bytes)
        console.print(f"  {result.files} files ({size}), each with its sha256 in manifest.json")
    for old in result.rotated:
        console.print(f"  {'would remove' if result.dry_run else 'removed'} the older backup {escape(old)} (--keep)")
    if result.record_path and not result.dry_run:
        console.print(f"  recorded in {escape(result.record_path)} (the audit's BACKUP_LAST_VERIFIED reads it)")
    for note in result.notes:
        console.print(f"  [yellow]note[/]: {escape(note)}")


@cli.command()
@store_options
@click.argument("dest", type=click.Path(file_okay=False))
@click.option("--keep", type=click.IntRange(min=1), metavar="N",
              help="Keep the N newest complete backups in DEST; delete older ones (never the new one).")
@click.option("--dry-run", is_flag=True, help="Read the counts and show the plan; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@hygiene_command
def backup(store: StoreOptions, dest: str, keep: int | None, dry_run: bool, as_json: bool) -> None:
    """Back up the vector store, history.db and the ledger together into DEST/mem0-backup-STAMP/.

    SQLite files are copied with VACUUM INTO and checked with PRAGMA integrity_check; a local Qdrant
    folder is copied while its lock is held, then opened and its points counted; every file's sha256
    goes into manifest.json. A failed check removes the new set and leaves earlier backups alone.
    While the app runs (it holds the local Qdrant lock), call m.backup(DEST) inside the app instead.
    """
    from ..actions.backup import backup as do_backup

    result = do_backup(store.load(), dest, keep=keep, dry_run=dry_run)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    _print_backup(console_for_output(), result)


def _print_restore(console: Console, result: Any) -> None:
    head = "dry run: would restore" if result.dry_run else "restored"
    console.print(f"{head} the backup taken {escape(result.backup_created_at)} from {escape(result.src)} "
                  f"({result.checked_files} files checked against their sha256)")
    for s in result.stores:
        src = escape(s.source) if s.source else "(none in the backup)"
        line = f"  {s.role}: {src} -> {escape(s.target)} ({_counts(s.counts)})"
        if s.replaced_to:
            line += f"; the current one {'would be' if result.dry_run else 'was'} moved to {escape(s.replaced_to)}"
        console.print(line)
    for note in result.notes:
        console.print(f"  [yellow]note[/]: {escape(note)}")


@cli.command()
@store_options
@click.argument("src", type=click.Path(file_okay=False))
@click.option("--dry-run", is_flag=True, help="Check the backup set and show the plan; change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@hygiene_command
def restore(store: StoreOptions, src: str, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Put the backup SRC back in place of the stores of the config, all together.

    Checks the manifest and every file's sha256 first and refuses a partial or damaged set. Refuses
    while the app holds the local Qdrant store (stop the app first: a restore has no in-process route).
    The current stores are moved aside to <store>.replaced-STAMP, never deleted; if any step fails,
    they are put back. Asks for confirmation unless --yes.
    """
    from ..actions.restore import restore as do_restore

    config = store.load()
    plan = do_restore(config, src, dry_run=True)
    if dry_run:
        if as_json:
            click.echo(json.dumps(plan.to_dict(), indent=2))
        else:
            _print_restore(console_for_output(), plan)
        return
    if not yes:
        _print_restore(Console(stderr=True), plan)
        click.confirm("Replace the current stores with this backup?", abort=True, err=True)
    result = do_restore(config, src)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    _print_restore(console_for_output(), result)


def _print_forget(console: Console, result: Any) -> None:
    verb = "would delete" if result.dry_run else "deleted"
    if result.deleted:
        console.print(f"{verb} (through mem0's API): {', '.join(result.deleted)}")
    if result.cascaded:
        console.print(f"  including the memories they superseded: {', '.join(result.cascaded)}")
    if result.already_deleted:
        console.print(f"already gone from the vector store: {', '.join(result.already_deleted)}")
    if result.scrub:
        verb = "would blank" if result.dry_run else "blanked"
        console.print(f"scrub: {verb} the text in {result.history_rows_blanked} history.db row(s) (rows kept), "
                      f"{'would remove' if result.dry_run else 'removed'} {result.messages_removed} messages row(s), "
                      f"{result.ledger_fields_blanked} ledger field(s); {result.texts} text(s) searched for")
        if result.vacuumed:
            console.print("  vacuumed: " + ", ".join(escape(p) for p in result.vacuumed))
        dirty = result.still_found
        if result.dry_run:
            where = ", ".join(escape(f.path) for f in dirty) or "no store file"
            console.print(f"  the text is found now in: {where}")
        elif not dirty:
            console.print(f"  [green]verified[/]: the text is found in none of the {len(result.files)} store files")
        for f in ([] if result.dry_run else dirty):
            console.print(f"  [bold red]still found[/] in {escape(f.path)}: {escape(f.reason)}")
    for note in result.notes:
        console.print(f"  [yellow]note[/]: {escape(note)}")


@cli.command()
@store_options
@click.argument("memory_ids", nargs=-1, required=True, metavar="ID...")
@click.option("--scrub", is_flag=True,
              help="Also erase the text: blank it in mem0's history.db (edited on purpose; event rows kept), "
                   "remove it from mem0's messages table, VACUUM, then verify the raw bytes of every store file.")
@click.option("--dry-run", is_flag=True, help="Show what would be deleted (and where the text is now); change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@hygiene_command
def forget(store: StoreOptions, memory_ids: tuple[str, ...], scrub: bool, dry_run: bool, as_json: bool) -> None:
    """Delete memories through mem0's API (with the chains they superseded); --scrub erases their text.

    --scrub is the privacy/legal deletion path and edits mem0's history.db on purpose: old_memory and
    new_memory become '' (the event rows stay), matching messages rows go, the SQLite files (and local
    Qdrant's storage.sqlite) are vacuumed, and every store file is read byte by byte. Exit status 1
    when the text is still found somewhere (each file is listed with the reason). While the app runs,
    call m.forget([...], scrub=True) inside the app instead.
    """
    from ..actions.forget import forget as do_forget

    result = do_forget(store.load(), list(memory_ids), scrub=scrub, dry_run=dry_run)  # offline embedder inside
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        _print_forget(console_for_output(), result)
    if result.scrub and not result.dry_run and not result.verified:
        where = ", ".join(f.path for f in result.still_found) or ", ".join(result.unverified)
        click.echo(f"Error: the erasure could not be verified: the text is still found in (or cannot be read "
                   f"from) {where}", err=True)
        sys.exit(1)
