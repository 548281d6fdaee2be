"""The maintenance commands: ``prune``, ``schedule``, ``review``, ``confirm``, ``invalidate``,
``supersede``, ``digest`` and ``history``.

Each is a thin layer over the function of the same name in :mod:`mem0_hygiene.maintenance` (or
:mod:`mem0_hygiene.actions.schedule`) and prints the result object it returns (a rich table; ``--json`` for
the same data as JSON). Commands that open the vector store (``prune``, ``supersede``, ``adopt``) refuse
with exit status 3 and the remedies while a running app holds its local Qdrant folder. ``confirm``,
``invalidate``, ``review`` (its queue, c and i), ``digest`` and ``history`` need only the ledger and
history.db, so they work while the app runs; only a memory without a ledger row needs the store (to adopt it).

Every command that prints memory text shows credentials in it redacted unless given ``--show-secrets``.

``review`` is interactive when stdin and stdout are terminals: for each memory it shows the text,
source and age and asks c=confirm / s=supersede / i=invalidate / d=delete / k=skip / q=quit, saving each
answer at once (s and d are off, saying why, while the app holds the store). ``--list`` (or a pipe) only
prints the queue; the hidden ``--interactive`` flag forces the prompts where there is no terminal (tests
drive them through click's CliRunner input).
"""

from __future__ import annotations

import os
import sys
from datetime import date
from typing import Any

import click

from ..display.text import plural
from ..errors import HygieneError
from .group import (
    StoreOptions,
    cli,
    console_for_output,
    emit,
    emit_json,
    hygiene_command,
    json_option,
    note,
    output_options,
    printable,
    show_secrets_option,
    store_options,
    unexpected_message,
    write_output,
)
from .params import DURATION, INTERVAL, WINDOW
from .progress import progress_shown

# --------------------------------------------------------------------------------------------- prune


@cli.command()
@store_options
@click.option("--dry-run", is_flag=True, help="Only list what would be deleted and compacted.")
@click.option(
    "--unused",
    metavar="DURATION",
    type=DURATION,
    help="Also list live memories neither used nor confirmed for this long (e.g. 180d).",
)
@click.option("--yes", is_flag=True, help="With --unused: delete those memories too.")
@json_option()
@output_options
@show_secrets_option
@hygiene_command
def prune(store: StoreOptions, dry_run: bool, unused: str | None, yes: bool, as_json: bool) -> None:
    """Delete expired memories, and superseded or invalidated ones past retention; compact the ledger.

    Everything is deleted through mem0's API (history.db records each DELETE). Afterwards old
    tombstones are removed from the ledger with secure_delete on. --unused 180d lists long-unused,
    unconfirmed memories too; add --yes to delete them. Needs no API key. While the app holds a local
    Qdrant store, run it in the app instead: maintenance.prune(m), or hygiene.auto_prune.
    """
    from .. import maintenance

    if yes and unused is None:
        raise click.UsageError("--yes only applies to --unused DURATION (what to delete without asking)")
    config = store.load()
    with progress_shown(as_json):
        result = maintenance.prune(config, dry_run=dry_run, unused=unused, delete_unused=yes)
    emit(result, as_json)
    if result.unused and not result.unused_deleted and not yes:
        note(
            f"{plural(len(result.unused), 'unused memory', 'unused memories')} listed, not deleted: run again "
            "with --yes to delete them (or confirm the ones still true)"
        )


# --------------------------------------------------------------------------------------------- schedule


def _absolute_store_args(store: StoreOptions) -> list[str]:
    from ..config_loader import MODULE_REF

    args: list[str] = []
    if store.config:
        ref = store.config
        if os.path.exists(ref) or not MODULE_REF.match(ref):  # a file; module:ATTR stays (WorkingDirectory)
            ref = os.path.abspath(os.path.expanduser(ref))
        args += ["--config", ref]
    for name in ("qdrant_path", "collection", "history_db", "ledger"):
        value = getattr(store, name)
        if value is None:
            continue
        if name != "collection" and value != ":memory:":
            value = os.path.abspath(os.path.expanduser(value))
        args += [f"--{name.replace('_', '-')}", value]
    return args


@cli.command()
@store_options
@click.option("--systemd", "kind", flag_value="systemd", help="A systemd service + timer (Persistent=true).")
@click.option("--cron", "kind", flag_value="cron", help="A crontab line.")
@click.option(
    "--every",
    default="24h",
    show_default=True,
    type=INTERVAL,
    help="How often: 15m, 30m, 1h, 6h, 12h, 24h (daily at --at) or 7d (Mondays at --at).",
)
@click.option("--at", "at", default="03:30", show_default=True, help="Time of day (HH:MM) for daily/weekly runs.")
@click.option(
    "--backup-dir",
    type=click.Path(file_okay=False),
    help="Also run `mem0-hygiene backup DIR` first (the prune runs only after a good backup).",
)
@click.option("--keep", type=click.IntRange(1), help="With --backup-dir: keep this many backups.")
@click.option(
    "--unused", metavar="DURATION", type=DURATION, help="Pass --unused DURATION to the scheduled prune (lists only)."
)
@click.option("--name", default="mem0-hygiene", show_default=True, help="Unit name (NAME.service, NAME.timer).")
@click.option("--user", help="Run the service as this user (default: you), so the store files keep their owner.")
@click.option("--install", is_flag=True, help="Write the unit files (systemd only); prints the systemctl commands.")
@click.option(
    "--unit-dir",
    default="/etc/systemd/system",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where --install writes the unit files.",
)
@json_option("the schedule")
@output_options
@hygiene_command
def schedule(
    store: StoreOptions,
    kind: str | None,
    every: str,
    at: str,
    backup_dir: str | None,
    keep: int | None,
    unused: str | None,
    name: str,
    user: str | None,
    install: bool,
    unit_dir: str,
    as_json: bool,
) -> None:
    """Print (or --install) a schedule that runs prune, and backup with --backup-dir, from outside the app.

    The config path is baked in as an absolute path. A local Qdrant store cannot be opened while the
    app runs (it holds the folder's lock): for such a store this warns and recommends maintenance inside
    the app (hygiene.auto_prune, m.backup(...)). --install never runs systemctl; it says what to run.
    """
    from ..actions.schedule import build_schedule, install_units
    from ..target import resolve

    if kind is None:
        raise click.UsageError("choose --systemd or --cron")
    if install and kind != "systemd":
        raise click.UsageError("--install writes systemd units; for cron add the printed line with `crontab -e`")
    if keep is not None and not backup_dir:
        raise click.UsageError("--keep applies to the backup: give --backup-dir DIR too")
    vs = resolve(store.load()).vector_location
    local_qdrant = vs.path if vs.provider == "qdrant" and vs.is_local else None
    env = {k: os.environ[k] for k in ("MEM0_DIR",) if os.environ.get(k)}
    plan = build_schedule(
        kind,
        _absolute_store_args(store),
        every=every,
        at=at,
        backup_dir=backup_dir,
        keep=keep,
        prune_args=["--unused", unused] if unused else [],
        name=name,
        user=user,
        environment=env,
        local_qdrant=local_qdrant,
        unit_dir=unit_dir,
    )
    for warning in plan.warnings:
        click.echo(f"warning: {printable(warning)}", err=True)
    if not store.config and not any(getattr(store, n) for n in ("qdrant_path", "history_db", "ledger", "collection")):
        click.echo(
            "warning: no --config given: the job will use mem0's defaults as its user sees them; pass "
            "--config FILE (the app's config) to be sure it maintains the app's store",
            err=True,
        )
    if as_json:
        emit_json(plan.to_dict())
        return
    lines: list[str] = []
    if install:
        lines += [f"wrote {path}" for path in install_units(plan, unit_dir)]
        lines += ["now enable it (as root):", *(f"  {line}" for line in plan.enable)]
    elif kind == "cron":
        lines += [
            "# mem0-hygiene maintenance; add with `crontab -e` (as the user that owns the store files)",
            plan.cron_line,
        ]
    else:
        for unit in plan.files:
            lines += [f"# ---- {os.path.join(unit_dir, unit.name)}", unit.text.rstrip("\n")]
        lines += ["# ---- then (as root):", *(f"# {line}" for line in plan.enable)]
    write_output("\n".join(lines) + "\n", "schedule")


# --------------------------------------------------------------------------------------------- review


def _show_item(console: Any, index: int, total: int, item: Any) -> None:
    from rich.text import Text

    console.print(Text(f"\n[{index}/{total}] {printable(item.text)}", style="bold"))
    age = "-" if item.age_days is None else f"{item.age_days:g} days"
    scope = ", ".join(f"{k}={v}" for k, v in item.scope.items()) or "-"
    console.print(Text(f"  source: {printable(item.source or 'unknown')} ({item.source_kind})"))
    console.print(
        Text(f"  last confirmed: {printable((item.confirmed_at or '-')[:10])} ({age} ago); scope: {printable(scope)}")
    )
    console.print(Text(f"  id: {printable(item.memory_id)}", style="dim"))


def _open_for_review(config: dict[str, Any]) -> tuple[Any, Any, dict[str, str]]:
    """(what the answers go to, the Memory when one is open, why a key is off: {"s": why, "d": why}).

    While another process (the app) holds the local Qdrant folder, nothing opens it: the queue and the c/i
    answers go through the ledger alone, and s (stores a new fact) and d (deletes through mem0's API) are off."""
    from .. import maintenance
    from ..errors import StoreLocked
    from ..target import resolve

    try:
        m = maintenance.open_memory(config, for_writing_text=True, action="review")
        return m, m, {}
    except maintenance.EmbedderUnavailable as exc:
        m = maintenance.open_memory(config, action="review")
        return m, m, {"s": str(exc)}
    except StoreLocked:
        target = resolve(config)
        held = f"the app holds the vector store at {target.lock_holder() or target.vector_path}"
        return (
            target,
            None,
            {
                "s": f"{held} (the new fact is stored there); stop the app and review again, or in the app: "
                "m.supersede(id, 'new fact', source=...)",
                "d": f"{held} (deletes go through mem0's API); stop the app and review again, or in the app: "
                "m.delete(id)",
            },
        )


def _note_ledger_only(config: dict[str, Any]) -> None:
    """Say so when the queue came from the ledger alone (the app holds the store)."""
    from ..target import resolve

    target = resolve(config)
    holder = None if target.read_only_reason() else target.lock_holder()  # read-only: read from the store's file
    if holder:
        note(
            f"note: the app holds the vector store at {printable(holder)}, so the queue is read from the ledger "
            "alone: memories plain mem0 wrote join it once adopted (`mem0-hygiene adopt` while the app is "
            "stopped, or m.adopt() in the app)"
        )


KEY_NAMES = {"s": "supersede", "d": "delete"}


@cli.command()
@store_options
@click.option(
    "--older-than",
    metavar="DURATION",
    type=DURATION,
    help="Due when last confirmed longer ago (default: the config's hygiene.review_older_than, 90d).",
)
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True, help="How many at most.")
@click.option(
    "--source",
    "answer_source",
    metavar="TEXT",
    help="Source recorded for facts typed in as supersedes (default: 'review YYYY-MM-DD').",
)
@click.option("--list", "list_only", is_flag=True, help="Only print the queue, never ask.")
@click.option("--interactive", is_flag=True, hidden=True, help="Ask even without a terminal (tests).")
@json_option("the queue", " (implies --list)")
@show_secrets_option
@output_options
@hygiene_command
def review(
    store: StoreOptions,
    older_than: str | None,
    limit: int,
    answer_source: str | None,
    list_only: bool,
    interactive: bool,
    as_json: bool,
) -> None:
    """Review the memories whose confirmation is oldest: confirm, supersede, invalidate or skip each.

    In a terminal it asks, one memory at a time: c=confirm (still true), s=supersede (type the new
    fact), i=invalidate (type why), d=delete, k=skip, q=quit. Each answer is saved at once, so quitting
    halfway loses nothing. Piped, or with --list/--json, it prints the queue. While the app holds a local
    Qdrant store, the queue, c and i work from the ledger alone; s and d say why they are off.
    Non-interactive equivalents: confirm ID..., invalidate ID --reason, supersede ID "new fact" --source.
    """
    from .. import maintenance

    config = store.load()
    asking = interactive or (sys.stdin.isatty() and sys.stdout.isatty())
    if list_only or as_json or not asking:
        emit(maintenance.review_queue(config, older_than=older_than, limit=limit), as_json)
        _note_ledger_only(config)
        return
    console = console_for_output()
    target, m, off = _open_for_review(config)
    source = answer_source or f"review {date.today().isoformat()}"
    done = {"confirmed": 0, "superseded": 0, "invalidated": 0, "deleted": 0, "skipped": 0}
    try:
        queue = maintenance.review_queue(target, older_than=older_than, limit=limit)
        if m is None:
            _note_ledger_only(config)
        if not queue.items:
            click.echo(f"nothing to review: no memory has gone unconfirmed for {queue.older_than}")
            return
        for key, why in off.items():
            click.echo(f"note: {KEY_NAMES[key]} is off in this session: {printable(why)}", err=True)
        click.echo(
            f"{plural(len(queue.items), 'memory', 'memories')} to review, oldest confirmation first; each "
            "answer is saved at once."
        )
        seen = 0
        for index, item in enumerate(queue.items, 1):
            _show_item(console, index, len(queue.items), item)
            answer = _review_one(target, m, item, source, done, off)
            if answer == "q":
                break
            seen += 1
        left = len(queue.items) - seen
        answered = done["confirmed"] + done["superseded"] + done["invalidated"] + done["deleted"]
        click.echo(
            f"saved {plural(answered, 'answer', 'answers')} ({done['confirmed']} confirmed, "
            f"{done['superseded']} superseded, {done['invalidated']} invalidated, {done['deleted']} deleted), "
            f"{done['skipped']} skipped, {left} not reached"
        )
    finally:
        if m is not None:
            m.close()


def _review_one(target: Any, m: Any, item: Any, source: str, done: dict[str, int], off: dict[str, str]) -> str:
    """Ask about one memory until it is answered; "q" to stop. A key that is off (``off``: why) says why and
    asks again; a supersede that fails in the app's embedder turns s off for the rest of the review."""
    from .. import maintenance

    while True:
        menu = " ".join(
            f"{key}={name}" + (" (off)" if key in off else "")
            for key, name in (
                ("c", "confirm"),
                ("s", "supersede"),
                ("i", "invalidate"),
                ("d", "delete"),
                ("k", "skip"),
                ("q", "quit"),
            )
        )
        try:
            answer = click.prompt(menu, type=click.Choice(["c", "s", "i", "d", "k", "q"]), show_choices=False)
            if answer in off:
                click.echo(f"  {KEY_NAMES[answer]} is off: {printable(off[answer])}")
                continue
            if answer == "q":
                return "q"
            if answer == "k":
                done["skipped"] += 1
                click.echo("  skipped (unchanged; it stays in the queue)")
                return "k"
            if answer == "c":
                maintenance.confirm(target, [item.memory_id])
                done["confirmed"] += 1
                click.echo("  confirmed")
            elif answer == "s":
                text = click.prompt("  new fact (empty to cancel)", default="", show_default=False).strip()
                if not text:
                    click.echo("  cancelled: nothing changed")
                    continue
                result = maintenance.supersede(target, item.memory_id, text, source=source)
                done["superseded"] += 1
                click.echo(f"  superseded by {result.changes[0].new_id}")
            elif answer == "i":
                reason = click.prompt("  reason (empty to cancel)", default="", show_default=False).strip()
                if not reason:
                    click.echo("  cancelled: nothing changed")
                    continue
                maintenance.invalidate(target, item.memory_id, reason)
                done["invalidated"] += 1
                click.echo("  invalidated")
            else:
                if not click.confirm("  delete it through mem0's API (with what it superseded)?", default=False):
                    click.echo("  cancelled: nothing changed")
                    continue
                m.delete(item.memory_id)
                done["deleted"] += 1
                click.echo("  deleted")
            return answer
        except click.Abort:
            click.echo("")
            return "q"
        except HygieneError as exc:
            click.echo(f"  not saved: {printable(str(exc))}", err=True)
            return answer
        except Exception as exc:  # the app's embedder or another remote call failed: say so, keep going
            if answer != "s":
                raise
            why = f"the app's embedder failed ({printable(unexpected_message(exc))})"
            click.echo(f"  not saved: {why}; supersede is off for the rest of this review", err=True)
            off["s"] = why
            return answer


@cli.command()
@store_options
@click.argument("memory_ids", nargs=-1, required=True, metavar="ID...")
@click.option("--dry-run", is_flag=True, help="Check the ids, change nothing.")
@json_option()
@show_secrets_option
@output_options
@hygiene_command
def confirm(store: StoreOptions, memory_ids: tuple[str, ...], dry_run: bool, as_json: bool) -> None:
    """Mark memories as re-checked today (also releases quarantined ones). All ids are checked first.

    Changes only the ledger, so it works while the app runs and holds its local Qdrant store; a memory with
    no ledger row yet (written by plain mem0) must be adopted from the store first.
    """
    from .. import maintenance

    emit(maintenance.confirm(store.load(), list(memory_ids), dry_run=dry_run), as_json)


@cli.command()
@store_options
@click.argument("memory_id", metavar="ID")
@click.option("--reason", required=True, help="What is wrong with it (kept for audit).")
@click.option("--dry-run", is_flag=True, help="Check the id, change nothing.")
@json_option()
@show_secrets_option
@output_options
@hygiene_command
def invalidate(store: StoreOptions, memory_id: str, reason: str, dry_run: bool, as_json: bool) -> None:
    """Declare a memory untrue: hidden from reads at once, kept for audit, deleted by a later prune.

    Refused for a memory that is deleted, superseded (invalidate its replacement instead) or already
    invalidated. Changes only the ledger, so it works while the app runs, as confirm does.
    """
    from .. import maintenance

    emit(maintenance.invalidate(store.load(), memory_id, reason, dry_run=dry_run), as_json)


@cli.command()
@store_options
@click.argument("memory_id", metavar="ID")
@click.argument("text", metavar='"NEW FACT"')
@click.option("--source", help="Where the new fact comes from (default: 'review YYYY-MM-DD').")
@click.option("--dry-run", is_flag=True, help="Check the id, store nothing.")
@json_option()
@show_secrets_option
@output_options
@hygiene_command
def supersede(store: StoreOptions, memory_id: str, text: str, source: str | None, dry_run: bool, as_json: bool) -> None:
    """Replace a memory by a new fact, keeping the chain (the old one is hidden and points at the new).

    The new fact is embedded with the app's own embedder (from --config), so this needs that
    embedder's API key when it has one; it says so clearly when it is missing.
    """
    from .. import maintenance

    result = maintenance.supersede(
        store.load(), memory_id, text, source=source or f"review {date.today().isoformat()}", dry_run=dry_run
    )
    emit(result, as_json)


# --------------------------------------------------------------------------------------------- digest, history


@cli.command()
@store_options
@click.option(
    "--since",
    default="1d",
    show_default=True,
    type=WINDOW,
    help="The window: a duration back from now (1d, 12h, 2w) or an ISO time (2026-08-01).",
)
@json_option("the digest")
@show_secrets_option
@output_options
@hygiene_command
def digest(store: StoreOptions, since: str, as_json: bool) -> None:
    """The memories written in the window with their source, tool/web-sourced first (read these: an
    injected "fact" from a web page or a file shows up here). Reads history.db and the ledger only, so
    it works while the app runs."""
    from .. import maintenance

    emit(maintenance.digest(store.load(), since=since), as_json)


@cli.command()
@store_options
@click.argument("memory_id", metavar="MEMORY_ID")
@json_option("the story")
@show_secrets_option
@output_options
@hygiene_command
def history(store: StoreOptions, memory_id: str, as_json: bool) -> None:
    """A memory's full story, oldest first: what it replaced and what replaced it (the supersede chain
    both ways), and every event from history.db and the ledger, each confirmation too (the latest 10 of
    each memory; --all or --json: every one). Works while the app runs."""
    from .. import maintenance
    from .group import current_output

    if as_json or current_output().show_all:
        emit(maintenance.memory_story(store.load(), memory_id, confirmations=None), as_json)
    else:
        emit(maintenance.memory_story(store.load(), memory_id), as_json)


# --------------------------------------------------------------------------------------------- adopt


@cli.command()
@store_options
@json_option("the count")
@output_options
@hygiene_command
def adopt(store: StoreOptions, as_json: bool) -> None:
    """Give every memory that has no ledger row one (written by plain mem0, or before the drop-in): source
    "unknown", so review, prune and the audit track it. Memories plain mem0 stored from a tool or function
    message are adopted as tool output, quarantined until confirmed. What the drop-in does lazily on reads,
    done now for the whole store (in the app: m.adopt())."""
    from .. import maintenance
    from .group import write_output

    m = maintenance.open_memory(store.load(), action="adopt")
    try:
        added = m.adopt()
    finally:
        m.close()
    if as_json:
        emit_json({"adopted": added})
        return
    write_output(
        f"adopted {plural(added, 'memory', 'memories')} (source 'unknown')"
        + ("; review them: mem0-hygiene review" if added else ": every memory already had a ledger row")
    )
