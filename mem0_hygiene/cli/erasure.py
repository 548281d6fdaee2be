"""The scope erasure behind ``forget --user/--agent/--run`` and ``forget --verify RECEIPT``.

Thin over :func:`mem0_hygiene.actions.forget_scope.forget_scope` and :func:`~mem0_hygiene.actions.forget_scope.
verify_receipt`: the result is printed (``--json``: its ``to_dict()``), and the exit status is 1 when the erasure
could not be verified or when something of a receipt's scope came back.
"""

from __future__ import annotations

import sys

import click

from .group import EXIT_FINDINGS, StoreOptions, emit, printable
from .progress import progress_shown


def forget_scope_command(
    store: StoreOptions,
    user_id: str | None,
    agent_id: str | None,
    run_id: str | None,
    keep_backups: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    from ..actions.forget_scope import forget_scope

    config = store.load()
    with progress_shown(as_json):
        result = forget_scope(
            config, user_id=user_id, agent_id=agent_id, run_id=run_id, keep_backups=keep_backups, dry_run=dry_run
        )
    emit(result, as_json)
    if not result.dry_run and not result.verified:
        click.echo(
            f"Error: the erasure could not be verified (see above; the receipt says what is left: "
            f"{printable(result.receipt or '-')})",
            err=True,
        )
        sys.exit(EXIT_FINDINGS)


def verify_command(store: StoreOptions, receipt: str, as_json: bool) -> None:
    from ..actions.forget_scope import verify_receipt

    config = store.load()
    with progress_shown(as_json):
        result = verify_receipt(config, receipt)
    emit(result, as_json)
    if result.came_back:
        click.echo("Error: something of the erased scope came back; run the same forget again to erase it", err=True)
        sys.exit(EXIT_FINDINGS)
