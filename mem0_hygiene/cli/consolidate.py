"""The ``consolidate`` command: merge duplicates, supersede older facts and invalidate contradicted ones among
the memories a store already holds (a thin layer over :func:`mem0_hygiene.maintenance.consolidate`).

Without ``--apply`` it plans only and prints the plan as a diff; in a terminal it then asks whether to apply
it (``--dry-run`` never asks). ``--apply`` applies without asking. Applying goes through supersede and
invalidate (nothing is deleted), and a run that was interrupted is finished by running the command again.
"""

from __future__ import annotations

import sys

import click

from .group import StoreOptions, cli, emit, hygiene_command, json_option, show_secrets_option, store_options


def parse_scopes(values: tuple[str, ...]) -> dict[str, str]:
    """``("user_id=dana", "agent_id=ops")`` -> ``{"user_id": "dana", "agent_id": "ops"}``."""
    out: dict[str, str] = {}
    for value in values:
        key, sep, name = value.partition("=")
        if not sep or not key.strip() or not name.strip():
            raise click.BadParameter(f"{value!r} is not KEY=VALUE; use e.g. --scope user_id=dana", param_hint="--scope")
        out[key.strip()] = name.strip()
    return out


@cli.command()
@store_options
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    metavar="KEY=VALUE",
    help="Only the scopes matching it (user_id=, agent_id=, run_id=); repeat to narrow further.",
)
@click.option("--dry-run", is_flag=True, help="Only show the plan, never ask, change nothing.")
@click.option("--apply", "apply_plan", is_flag=True, help="Apply the plan without asking.")
@click.option(
    "--neighbours",
    type=click.IntRange(1, 100),
    metavar="N",
    help="How many nearest memories each memory is compared with (default: hygiene.write_decision.candidates, 5).",
)
@click.option("--interactive", is_flag=True, hidden=True, help="Ask even without a terminal (tests).")
@json_option("the plan", " (never asks: a dry run unless --apply)")
@show_secrets_option
@hygiene_command
def consolidate(
    store: StoreOptions,
    scopes: tuple[str, ...],
    dry_run: bool,
    apply_plan: bool,
    neighbours: int | None,
    interactive: bool,
    as_json: bool,
) -> None:
    """Merge duplicates, supersede older facts and invalidate contradicted ones, scope by scope.

    Each live memory is compared with its nearest neighbours in its own scope, using the embeddings
    already stored (nothing is embedded again, no API key needed), through the same decision as
    hygiene.write_decision. Without --apply this prints the plan as a diff and, in a terminal, asks
    before applying it. Pairs the decision is unsure of are listed, never applied. Applying goes
    through supersede/invalidate (never a delete) and is recorded: `mem0-hygiene history ID` says why.
    An interrupted run is finished by running it again.
    """
    from .. import maintenance

    if dry_run and apply_plan:
        raise click.UsageError("choose --dry-run or --apply, not both")
    scope = parse_scopes(scopes)
    config = store.load()  # the app's embedder picks the thresholds; it never runs (nothing is embedded)
    asking = (
        not dry_run and not apply_plan and not as_json and (interactive or (sys.stdin.isatty() and sys.stdout.isatty()))
    )
    plan = maintenance.consolidate(config, scope=scope, dry_run=not apply_plan, neighbours=neighbours)
    emit(plan, as_json)
    if not asking or not plan.steps:
        return
    if not click.confirm(f"apply these {len(plan.steps)} change(s)?", default=False):
        click.echo("nothing changed")
        return
    emit(maintenance.consolidate(config, scope=scope, neighbours=neighbours), as_json)
