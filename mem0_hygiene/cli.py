"""The ``mem0-hygiene`` command line: a click group, each command thin over a library call."""

from __future__ import annotations

import os

os.environ.setdefault("MEM0_TELEMETRY", "False")

import contextlib  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any, TypeVar, cast  # noqa: E402

import click  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402
from rich.table import Table  # noqa: E402

from . import __version__  # noqa: E402
from .errors import HygieneError  # noqa: E402


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mem0-hygiene")
def cli() -> None:
    """Keep an agent's mem0 memory true: audit it, prune it, review it, back it up."""


# --------------------------------------------------------------------------------------------- shared plumbing

F = TypeVar("F", bound=Callable[..., Any])


@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """Turn the library's errors into a clean message and exit status 1 (no traceback)."""
    try:
        yield
    except HygieneError as exc:
        raise click.ClickException(str(exc)) from exc


def hygiene_command(func: F) -> F:
    """Decorator for a command body: a :class:`HygieneError` becomes ``Error: MESSAGE`` and exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with reported_errors():
            return func(*args, **kwargs)

    return cast(F, wrapper)


@dataclass(frozen=True)
class StoreOptions:
    """The store-selecting options every store command shares (see :func:`store_options`)."""

    config: str | None = None
    qdrant_path: str | None = None
    collection: str | None = None
    history_db: str | None = None
    ledger: str | None = None

    def load(self) -> dict[str, Any]:
        """The app's mem0 config dict with the shortcuts applied ({} = mem0's defaults)."""
        from .config_loader import load_config

        return load_config(self.config, qdrant_path=self.qdrant_path, collection=self.collection,
                           history_db=self.history_db, ledger=self.ledger)

    def load_for_maintenance(self) -> dict[str, Any]:
        """The same, with the offline embedder and LLM: for commands that only read or delete."""
        from .config_loader import for_maintenance

        return for_maintenance(self.load())


_STORE_OPTION_NAMES = ("config", "qdrant_path", "collection", "history_db", "ledger")


def store_options(func: F) -> F:
    """Add --config, --qdrant-path, --collection, --history-db, --ledger; pass them as ``store``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, None) for name in _STORE_OPTION_NAMES}
        kwargs["store"] = StoreOptions(**values)
        return func(*args, **kwargs)

    options = [
        click.option("--config", "config", metavar="FILE|MODULE:ATTR",
                     help="The app's mem0 config: a JSON/YAML file, or module:ATTRIBUTE naming a dict "
                          "(or a function returning one). Default: mem0's defaults."),
        click.option("--qdrant-path", type=click.Path(), help="Local Qdrant folder (vector_store.config.path)."),
        click.option("--collection", help="Vector-store collection (vector_store.config.collection_name)."),
        click.option("--history-db", type=click.Path(dir_okay=False), help="mem0's history database."),
        click.option("--ledger", type=click.Path(dir_okay=False), help="The hygiene ledger (hygiene.ledger_path)."),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


def _console() -> Console:
    console = Console()
    if not console.is_terminal:  # pipes and tests: do not cut paths at 80 columns
        console = Console(width=max(console.width, 200))
    return console


def _human_size(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _yes_no(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


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
    from .locations import resolve_locations

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
            _yes_no(loc.exists if loc.is_local else None),
            _human_size(loc.size_bytes),
        )
    console = _console()
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
    from .relocate import relocate as do_relocate

    result = do_relocate(store.load(), to_dir, include_sqlite=with_sqlite, dry_run=dry_run,
                         remove_source=remove_source)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    console = _console()
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

# --------------------------------------------------------------------------------------------- audit

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3


def _config_hint(store: StoreOptions) -> str:
    parts = []
    for name in _STORE_OPTION_NAMES:
        value = getattr(store, name)
        if value:
            parts.append(f" --{name.replace('_', '-')} {value}")
    return "".join(parts)


def _run_audit(target: Any, *, as_json: bool, html: str | None, output: str | None, fail_on: str,
               strict: bool, examples: int, description: str, config_hint: str) -> int:
    from .audit import audit
    from .render import format_html, format_json, format_text, summary_line
    from .report import Severity

    report = audit(target, examples=examples, description=description, config_hint=config_hint)
    if html:
        with open(html, "w", encoding="utf-8") as fh:
            fh.write(format_html(report))
    if as_json:
        text = format_json(report) + "\n"
        click.echo(f"mem0-hygiene audit: {summary_line(report)}", err=True)
    else:
        console = Console()
        width = console.width if console.is_terminal else 110
        text = format_text(report, width=width, color=console.is_terminal and output is None)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
        click.echo(f"mem0-hygiene audit: {summary_line(report)}; report written to {output}", err=True)
    else:
        click.echo(text, nl=not text.endswith("\n"))
    if report.at_or_above(Severity.parse(fail_on)):
        return EXIT_FINDINGS
    if strict and report.skipped:
        return EXIT_FAILED
    return EXIT_CLEAN


def audit_options(func: F) -> F:
    options = [
        click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (summary on stderr)."),
        click.option("--html", type=click.Path(dir_okay=False), help="Also write the report as an HTML page."),
        click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report to FILE."),
        click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error",
                     show_default=True, help="Exit 1 when a finding is at or above this severity."),
        click.option("--strict", is_flag=True, help="Exit 3 when any check could not run (skipped)."),
        click.option("--examples", type=click.IntRange(0, 100), default=5, show_default=True,
                     help="Example ids/texts per finding."),
    ]
    decorated: Any = func
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


@cli.command()
@store_options
@audit_options
def audit(store: StoreOptions, as_json: bool, html: str | None, output: str | None, fail_on: str, strict: bool,
          examples: int) -> None:
    """Diagnose a mem0 deployment: storage, history.db vs. the vector store, the ledger, content.

    Only reads. Exit status: 0 nothing at or above --fail-on, 1 findings at or above it, 2 usage
    error, 3 the audit could not run (or, with --strict, a check was skipped).
    """
    from .audit import AuditError
    from .errors import ConfigError

    try:
        config = store.load()
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        code = _run_audit(config, as_json=as_json, html=html, output=output, fail_on=fail_on, strict=strict,
                          examples=examples, description=store.config or "mem0 defaults",
                          config_hint=_config_hint(store))
    except (AuditError, HygieneError) as exc:
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(EXIT_FAILED) from exc
    raise SystemExit(code)


# --------------------------------------------------------------------------------------------- demo


@cli.command()
@click.option("--dir", "folder", default="mem0-hygiene-demo", show_default=True, type=click.Path(file_okay=False),
              help="Where to build the demo deployment (recreated if it is an earlier demo).")
@audit_options
@hygiene_command
def demo(folder: str, as_json: bool, html: str | None, output: str | None, fail_on: str, strict: bool,
         examples: int) -> None:
    """Build a sandbox mem0 deployment with realistic troubles, then audit it. Offline, no API key."""
    from .demo import build_demo

    result = build_demo(folder)
    click.echo(f"Built a demo deployment in {result.folder} (config: {result.folder}/config.json):", err=True)
    for item in result.planted:
        click.echo(f"  - {item}", err=True)
    click.echo(f"Auditing it: mem0-hygiene audit --config {result.folder}/config.json\n", err=True)
    _run_audit(result.config, as_json=as_json, html=html, output=output, fail_on=fail_on, strict=strict,
               examples=examples, description=f"demo ({result.folder}/config.json)",
               config_hint=f" --config {result.folder}/config.json")



def main() -> None:
    """Console-script entry point."""
    import logging

    # mem0 warns about optional extras (spaCy, fastembed) that maintenance commands never use.
    logging.getLogger("mem0").setLevel(logging.ERROR)
    cli()
