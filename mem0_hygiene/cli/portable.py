"""Moving a store: ``export OUT`` and ``import IN`` (the portable JSON Lines format of
:mod:`mem0_hygiene.stores.portable`).

Each is thin over the library function (:func:`mem0_hygiene.actions.export.export`,
:func:`mem0_hygiene.actions.portable_import.import_`); ``--json`` prints the result's ``to_dict()``, otherwise the
result itself (it renders its own summary).
"""

from __future__ import annotations

import click

from .group import StoreOptions, cli, emit, hygiene_command, json_option, output_options, store_options
from .params import OUTPUT_FILE
from .progress import progress_shown


@cli.command()
@store_options
@click.argument("out", type=OUTPUT_FILE)
@click.option("--with-vectors", is_flag=True, help="Write each memory's stored vector too (import without embedding).")
@click.option(
    "--include-secrets",
    is_flag=True,
    help="Keep credentials found in texts, sources and history as stored (redacted by default).",
)
@json_option()
@output_options
@hygiene_command
def export(store: StoreOptions, out: str, with_vectors: bool, include_secrets: bool, as_json: bool) -> None:
    """Export every memory (text, scope, metadata, ledger facts, chains, tombstones) to OUT as JSON Lines.

    mem0's history goes into a second file beside it (OUT without .jsonl, plus .history.jsonl). Each file has
    a header (format, version, source, embedder, counts) and a trailer (count and sha256 of the lines), so a
    file cut short is refused on import. Credentials are redacted unless --include-secrets. Reads only.
    """
    from ..actions.export import export as do_export

    config = store.load()  # the app's embedder is named in the header; export embeds nothing
    with progress_shown(as_json):
        result = do_export(config, out, with_vectors=with_vectors, include_secrets=include_secrets)
    emit(result, as_json)


@cli.command("import")
@store_options
@click.argument("src", type=click.Path(dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Check the files and the target and show the plan; write nothing.")
@json_option()
@output_options
@hygiene_command
def import_command(store: StoreOptions, src: str, dry_run: bool, as_json: bool) -> None:
    """Import an export (SRC and its .history.jsonl) into the config's stores, which must be empty.

    Both files are checked whole first. Ids are kept; the file's vectors are used when their length is the
    embedder's, else the texts are embedded by the config's embedder. The ledger's states, chains and
    tombstones and mem0's history come along. An interrupted import is finished by running it again.
    """
    from ..actions.portable_import import import_

    config = store.load()
    with progress_shown(as_json):
        result = import_(config, src, dry_run=dry_run)
    emit(result, as_json)
