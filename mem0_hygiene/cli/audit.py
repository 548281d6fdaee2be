"""The diagnosis commands: ``audit`` and ``demo``. Credentials in the report's examples are redacted unless
``--show-secrets`` is given."""

from __future__ import annotations

from typing import Any, cast

import click
from rich.console import Console

from ..errors import HygieneError
from . import (
    EXIT_BAD_INPUT,
    STORE_OPTION_NAMES,
    BadInput,
    F,
    StoreOptions,
    cli,
    hygiene_command,
    json_option,
    printable,
    show_secrets_option,
    store_options,
)

# --------------------------------------------------------------------------------------------- audit

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_FAILED = 0, 1, EXIT_BAD_INPUT, 3


def _config_hint(store: StoreOptions) -> str:
    parts = []
    for name in STORE_OPTION_NAMES:
        value = getattr(store, name)
        if value:
            parts.append(f" --{name.replace('_', '-')} {value}")
    return "".join(parts)


def _run_audit(target: Any, *, as_json: bool, html: str | None, output: str | None, fail_on: str,
               strict: bool, examples: int, description: str, config_hint: str) -> int:
    from ..auditing.runner import audit
    from ..render import format_html, format_json, format_text, summary_line
    from ..report import Severity

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
        click.echo(f"mem0-hygiene audit: {summary_line(report)}; report written to {printable(output)}", err=True)
    else:
        click.echo(text, nl=not text.endswith("\n"))
    if report.at_or_above(Severity.parse(fail_on)):
        return EXIT_FINDINGS
    if strict and report.skipped:
        return EXIT_FAILED
    return EXIT_CLEAN


def audit_options(func: F) -> F:
    options = [
        json_option("the report", " (summary on stderr)"),
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
@show_secrets_option
def audit(store: StoreOptions, as_json: bool, html: str | None, output: str | None, fail_on: str, strict: bool,
          examples: int) -> None:
    """Diagnose a mem0 deployment: storage, history.db vs. the vector store, the ledger, content.

    Only reads. Exit status: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input
    (a bad option, or a config or setting that cannot be read or used), 3 the audit could not run (or,
    with --strict, a check was skipped).
    """
    from ..auditing.runner import AuditError
    from ..errors import ConfigError

    try:
        config = store.load()
        code = _run_audit(config, as_json=as_json, html=html, output=output, fail_on=fail_on, strict=strict,
                          examples=examples, description=store.config or "mem0 defaults",
                          config_hint=_config_hint(store))
    except ConfigError as exc:  # never exit 1 ("findings") or 3 ("could not run") for bad input
        raise BadInput(printable(str(exc))) from exc
    except (AuditError, HygieneError) as exc:
        click.echo(f"Error: {printable(str(exc))}", err=True)
        raise SystemExit(EXIT_FAILED) from exc
    raise SystemExit(code)


# --------------------------------------------------------------------------------------------- demo


@cli.command()
@click.option("--dir", "folder", default="mem0-hygiene-demo", show_default=True, type=click.Path(file_okay=False),
              help="Where to build the demo deployment (recreated if it is an earlier demo).")
@audit_options
@show_secrets_option
@hygiene_command
def demo(folder: str, as_json: bool, html: str | None, output: str | None, fail_on: str, strict: bool,
         examples: int) -> None:
    """Build a sandbox mem0 deployment with realistic troubles, then audit it. Offline, no API key."""
    from ..demo import build_demo

    result = build_demo(folder)
    where = printable(result.folder)
    click.echo(f"Built a demo deployment in {where} (config: {where}/config.json):", err=True)
    for item in result.planted:
        click.echo(f"  - {printable(item)}", err=True)
    click.echo(f"Auditing it: mem0-hygiene audit --config {where}/config.json\n", err=True)
    _run_audit(result.config, as_json=as_json, html=html, output=output, fail_on=fail_on, strict=strict,
               examples=examples, description=f"demo ({result.folder}/config.json)",
               config_hint=f" --config {result.folder}/config.json")


