"""Backup, restore and erasure commands: ``backup``, ``restore`` and ``forget``.

Each is thin over the library function of the same name (:func:`mem0_hygiene.actions.backup.backup`,
:func:`mem0_hygiene.actions.restore.restore`, :func:`mem0_hygiene.actions.forget.forget`); ``--json`` prints the
result's ``to_dict()``, otherwise the result itself (it renders its own summary).
"""

from __future__ import annotations

import sys

import click

from .group import (
    EXIT_FINDINGS,
    StoreOptions,
    cli,
    emit,
    hygiene_command,
    json_option,
    output_options,
    printable,
    render_plain,
    store_options,
)
from .params import DESTINATION_FOLDER
from .progress import progress_shown


@cli.command()
@store_options
@click.argument("dest", type=DESTINATION_FOLDER)
@click.option(
    "--keep",
    type=click.IntRange(min=1),
    metavar="N",
    help="Keep the N newest complete backups in DEST; delete older ones (never the new one).",
)
@click.option("--dry-run", is_flag=True, help="Read the counts and show the plan; write nothing.")
@json_option()
@output_options
@hygiene_command
def backup(store: StoreOptions, dest: str, keep: int | None, dry_run: bool, as_json: bool) -> None:
    """Back up the vector store, history.db and the ledger together into DEST/mem0-backup-STAMP/.

    SQLite files are copied with VACUUM INTO and checked with PRAGMA integrity_check; a local Qdrant
    folder is copied while its lock is held, then opened and its points counted; a ledger on PostgreSQL
    is dumped into hygiene.db from one REPEATABLE READ snapshot taken meanwhile; every file's sha256
    (and every dumped ledger table's) goes into manifest.json. A failed check removes the new set and
    leaves earlier backups alone.
    While the app runs (it holds the local Qdrant lock), call m.backup(DEST) inside the app instead.
    """
    from ..actions.backup import backup as do_backup

    config = store.load()
    with progress_shown(as_json):
        result = do_backup(config, dest, keep=keep, dry_run=dry_run)
    emit(result, as_json)


@cli.command()
@store_options
@click.argument("src", type=click.Path(file_okay=False))
@click.option("--dry-run", is_flag=True, help="Check the backup set and show the plan; change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--reapply-erasures",
    is_flag=True,
    help="Restore a set made before an erasure (forget --user ...) that did not scrub it, then apply that erasure "
    "again to what was restored and check its receipt, before anything opens the stores.",
)
@json_option()
@output_options
@hygiene_command
def restore(store: StoreOptions, src: str, dry_run: bool, yes: bool, reapply_erasures: bool, as_json: bool) -> None:
    """Put the backup SRC back in place of the stores of the config, all together.

    Checks the manifest and every file's sha256 first and refuses a partial or damaged set. Refuses
    while the app holds the local Qdrant store (stop the app first: a restore has no in-process route).
    The current stores are moved aside to <store>.replaced-STAMP, never deleted; if any step fails,
    they are put back. A ledger on PostgreSQL (named by --config) gets the set's ledger rows in one
    transaction, verified per table before it commits; the rows it replaces are kept in
    ledger-postgresql.db.replaced-STAMP beside the journal. Asks for confirmation unless --yes.

    A set made before an erasure receipt (forget --user ...) that did not scrub it is refused, naming the
    receipt: it would bring the erased person back. --reapply-erasures restores it and erases each such scope
    again from what was restored, then checks the receipts; until that is done (also when killed midway: run
    the same command again) nothing opens the stores.
    """
    import os

    from ..actions.restore import restore as do_restore

    config = store.load()
    source = os.path.abspath(store.config) if store.config and os.path.isfile(store.config) else store.config
    with progress_shown(as_json):
        plan = do_restore(config, src, dry_run=True, reapply_erasures=reapply_erasures)
    if dry_run:
        emit(plan, as_json)
        return
    if not yes:  # the plan, headed as what is about to happen (it is no dry run)
        text = render_plain(plan).replace("dry run: would restore", "about to restore", 1)
        click.echo(text.replace("would be moved to", "will be moved to").rstrip("\n"), err=True)
        if not click.confirm("Replace the current stores with this backup?", default=False, err=True):
            click.echo("not restored: nothing was changed", err=True)
            return
    with progress_shown(as_json):
        result = do_restore(config, src, config_source=source, reapply_erasures=reapply_erasures)
    emit(result, as_json)


@cli.command()
@store_options
@click.argument("memory_ids", nargs=-1, metavar="[ID...]")
@click.option(
    "--user", "user_id", metavar="ID", help="Erase everything of this user (see --agent, --run), with a receipt."
)
@click.option("--agent", "agent_id", metavar="ID", help="Erase everything of this agent (with --user: of both).")
@click.option("--run", "run_id", metavar="ID", help="Erase everything of this run (with --user/--agent: of all).")
@click.option(
    "--verify",
    "receipt",
    metavar="RECEIPT",
    type=click.Path(dir_okay=False),
    help="Check an erasure receipt again: exit 1 when anything of its scope came back (after a restore, say).",
)
@click.option(
    "--scrub",
    is_flag=True,
    help="Also erase the text: blank it in mem0's history.db (edited on purpose; event rows kept), "
    "remove it from mem0's messages table, VACUUM, then verify the raw bytes of every store file.",
)
@click.option(
    "--keep-backups",
    is_flag=True,
    help="With --scrub: leave backup sets alone; each one that still holds the text is named (exit 1).",
)
@click.option("--dry-run", is_flag=True, help="Show what would be deleted (and where the text is now); change nothing.")
@json_option()
@output_options
@hygiene_command
def forget(
    store: StoreOptions,
    memory_ids: tuple[str, ...],
    user_id: str | None,
    agent_id: str | None,
    run_id: str | None,
    receipt: str | None,
    scrub: bool,
    keep_backups: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Delete memories through mem0's API (with the chains they superseded); --scrub erases their text.

    --user/--agent/--run erase a person (a scope) everywhere: every memory of it through mem0's API, then its
    text and its raw conversation turns from history.db, mem0's messages and entity collection, the ledger and
    every registered copy, verified like --scrub, and write a receipt (JSON: scope, time, every store, file and
    copy checked, counts, sha256 of the texts, never the texts). Killed, run it again: it finishes. --verify
    RECEIPT checks a receipt again later.

    --scrub is the privacy/legal deletion path and edits mem0's history.db on purpose: old_memory and
    new_memory become '' (the event rows stay), matching messages rows go, the SQLite files (and local
    Qdrant's storage.sqlite) are vacuumed. The same is done in every registered copy of the stores
    (backup sets, whose checksums are rewritten so they still restore; stores restore moved aside;
    relocation sources), then every file of the stores and of the copies is read byte by byte. Exit
    status 1 when the text is still found somewhere (each file is listed with the reason), or, with
    --keep-backups, while a backup set still holds it (each set is named). While the app runs, call
    m.forget([...], scrub=True) inside the app instead.
    """
    from ..actions.forget import forget as do_forget
    from .erasure import forget_scope_command, verify_command

    scoped = bool(user_id or agent_id or run_id)
    if receipt is not None:
        if scoped or memory_ids:
            raise click.UsageError("--verify takes a receipt alone: no memory ids, no --user/--agent/--run")
        verify_command(store, receipt, as_json)
        return
    if scoped:
        if memory_ids:
            raise click.UsageError("give memory ids or --user/--agent/--run, not both")
        forget_scope_command(store, user_id, agent_id, run_id, keep_backups, dry_run, as_json)
        return
    if not memory_ids:
        raise click.UsageError("say what to forget: memory ids, or --user/--agent/--run ID (or --verify RECEIPT)")
    if keep_backups and not scrub:
        raise click.UsageError("--keep-backups only makes sense with --scrub")
    config = store.load()
    with progress_shown(as_json):
        result = do_forget(
            config,
            list(memory_ids),
            scrub=scrub,
            dry_run=dry_run,  # offline embedder inside
            keep_backups=keep_backups,
        )
    emit(result, as_json)
    if result.scrub and not result.dry_run and not result.verified:
        holding = result.copies_holding_text
        if holding:
            click.echo(
                "Error: the text is still found in these copies of the stores: "
                + ", ".join(
                    f"{printable(c.path)} ({c.kind}{', kept with --keep-backups' if c.kept else ''})" for c in holding
                ),
                err=True,
            )
        live = [f.path for f in result.still_found if f.kind == "live"]
        if live or result.unverified or not holding:
            where = printable(", ".join(live) or ", ".join(result.unverified) or "-")
            click.echo(
                f"Error: the erasure could not be verified: the text is still found in (or cannot be read "
                f"from) {where}",
                err=True,
            )
        sys.exit(EXIT_FINDINGS)
