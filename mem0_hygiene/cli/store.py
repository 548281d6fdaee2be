"""Store-location commands: ``where`` and ``relocate``."""

from __future__ import annotations

import click

from .group import (
    StoreOptions,
    cli,
    emit_json,
    emit_text,
    hygiene_command,
    json_option,
    output_options,
    store_options,
)

WHERE_SCHEMA_VERSION = 1
"""``schema_version`` of ``where --json``: raised when a key changes meaning or goes away (new keys may be added)."""

# --------------------------------------------------------------------------------------------- where


@cli.command()
@store_options(many_histories=True)
@json_option("the locations and copies")
@output_options
@hygiene_command
def where(store: StoreOptions, as_json: bool) -> None:
    """Show where the memories live: vector store, history.db, ledger, mem0's folder, and every copy.

    For each local path: the filesystem behind it, whether it is RAM-backed (tmpfs: gone at reboot)
    or under /tmp, whether it exists, and its size. Then every copy of the stores the tool made and
    registered (backup sets, stores restore moved aside, relocation sources), with its age and size.
    Then the erasure receipts forget --user/--agent/--run wrote: the scope, when, and whether the erasure was
    verified then (forget --verify RECEIPT and the audit's ERASURE_UNDONE check them again).
    With --json: {"schema_version": 1, "locations": [...], "copies": [...], "copies_problem": null,
    "receipts": [...]}.
    """
    from ..actions.where import where as locate

    result = locate(store.load())
    if as_json:
        emit_json({"schema_version": WHERE_SCHEMA_VERSION, **result.to_dict()})
        return
    emit_text(result)


# --------------------------------------------------------------------------------------------- relocate


@cli.command()
@store_options
@click.option(
    "--to",
    "to_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Destination folder: the vector store goes to DIR/qdrant, DIR/chroma or DIR/faiss (SQLite files keep "
    "their names).",
)
@click.option(
    "--with-sqlite",
    is_flag=True,
    help="Also move mem0's history.db, the ledger and the files beside it: its backup record and "
    "registry of copies (SQLite with VACUUM INTO).",
)
@click.option("--dry-run", is_flag=True, help="Check and show what would move; write nothing.")
@click.option(
    "--remove-source",
    is_flag=True,
    help="Leave no link at the old paths: readers of them then find nothing (the output says where each store went).",
)
@click.option(
    "--update-config",
    "update_config",
    type=click.Path(dir_okay=False),
    default=None,
    help="The app's JSON or YAML config file to rewrite with the new paths (other keys and YAML "
    "comments kept), instead of printing the keys to merge by hand.",
)
@json_option()
@output_options
@hygiene_command
def relocate(
    store: StoreOptions,
    to_dir: str,
    with_sqlite: bool,
    dry_run: bool,
    remove_source: bool,
    update_config: str | None,
    as_json: bool,
) -> None:
    """Move a local Qdrant, Chroma or FAISS store (and with --with-sqlite, history.db and the ledger) to DIR.

    Refuses while another process has the store open (local Qdrant's lock; Chroma and FAISS take none, so
    the processes' open files are checked, and the output says so). Copies, verifies point counts and the
    payloads, then turns each old path into a link to the new one, so every reader of the old path (the
    app's old config, plain mem0) sees the same store, and deletes the moved-from data. A vector store on a
    server (pgvector, a Qdrant server) stays there: only history.db and the ledger move. An interrupted
    run is finished by running the same command again. With --update-config the app's config file is
    rewritten; otherwise the config to use from now on is printed.
    """
    from ..actions.relocate import relocate as do_relocate
    from .progress import progress_shown

    config = store.load()
    with progress_shown(as_json):
        result = do_relocate(
            config,
            to_dir,
            include_sqlite=with_sqlite,
            dry_run=dry_run,
            remove_source=remove_source,
            update_config=update_config,
        )
    if as_json:
        emit_json(result.to_dict())
        return
    if result.config_file is None:
        from rich.console import Group
        from rich.text import Text

        from ..render.json import to_json

        emit_text(Group(result, Text(to_json(result.config_snippet))))
    else:
        emit_text(result)
