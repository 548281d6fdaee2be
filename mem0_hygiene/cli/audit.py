"""The diagnosis commands: ``audit`` and ``demo``. Credentials in the report's examples are redacted unless
``--show-secrets`` is given."""

from __future__ import annotations

from typing import Any, cast

import click

from .group import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_FINDINGS,
    EXIT_INCOMPLETE,
    OUTPUT_KEY,
    STORE_OPTION_NAMES,
    F,
    OutputOptions,
    StoreOptions,
    cli,
    color_wanted,
    current_output,
    hygiene_command,
    json_option,
    printable,
    show_secrets_option,
    store_options,
)
from .params import OUTPUT_FILE

# --------------------------------------------------------------------------------------------- audit

EXIT_CLEAN, EXIT_USAGE = 0, EXIT_BAD_INPUT


def _config_hint(store: StoreOptions) -> str:
    """The store options of the fix commands: the other commands take one --history-db, this host's own (the
    first given, without its label)."""
    parts = []
    for name in STORE_OPTION_NAMES:
        value = getattr(store, name)
        if value:
            parts.append(f" --{name.replace('_', '-')} {value}")
    return "".join(parts)


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _run_audit(
    target: Any,
    *,
    as_json: bool,
    html: str | None,
    fail_on: str,
    strict: bool,
    examples: int,
    description: str,
    config_hint: str,
    fmt: str = "text",
) -> int:
    from ..auditing.runner import audit
    from ..render import format_html, format_json, format_text, summary_line
    from ..report import Severity
    from .progress import progress_shown

    out = current_output()
    with progress_shown(as_json or fmt == "prometheus"):
        report = audit(target, examples=examples, description=description, config_hint=config_hint)
    wrote: list[str] = []
    if html:
        _write(html, format_html(report))
        wrote.append(f"HTML report written to {printable(html)}")
    colored = False
    if fmt == "prometheus":
        from ..render.prometheus import format_prometheus

        text = format_prometheus(report)
    elif as_json:
        text = format_json(report) + "\n"
    else:
        from rich.console import Console

        console = Console()
        width = console.width if console.is_terminal else 110
        colored = color_wanted(console.is_terminal) and out.file is None
        text = format_text(report, width=width, color=colored)
    if out.file and fmt == "prometheus":  # the textfile collector must never read half a file
        from ..stores.durable import write_file

        write_file(out.file, text, mode=0o644)
        wrote.append(f"report written to {printable(out.file)}")
    elif out.file:
        _write(out.file, text if text.endswith("\n") else text + "\n")
        wrote.append(f"report written to {printable(out.file)}")
    elif not out.quiet:
        click.echo(text, nl=not text.endswith("\n"), color=colored or None)  # click would strip the colours
    if not out.quiet and (as_json or out.file or html or fmt == "prometheus"):  # the one summary line, on stderr
        click.echo("; ".join([f"mem0-hygiene audit: {summary_line(report)}", *wrote]), err=True)
    if report.at_or_above(Severity.parse(fail_on)):
        return EXIT_FINDINGS
    unsupported = report.stats.get("vector_store_unsupported")
    if unsupported:
        if as_json or out.file or out.quiet:  # the reason is in the report; one line on stderr as well
            click.echo(f"mem0-hygiene audit: incomplete: {unsupported}", err=True)
        return EXIT_INCOMPLETE
    if strict and report.skipped:
        return EXIT_FAILED
    return EXIT_CLEAN


def audit_options(func: F) -> F:
    """The options audit and demo share; ``-o/--output`` and ``--quiet`` are read back with
    :func:`~mem0_hygiene.cli.current_output`."""

    def keep_output(*args: Any, **kwargs: Any) -> Any:
        options = OutputOptions(file=kwargs.pop("output", None), quiet=bool(kwargs.pop("quiet", False)))
        click.get_current_context().meta[OUTPUT_KEY] = options
        return func(*args, **kwargs)

    import functools

    wrapper: Any = functools.wraps(func)(keep_output)
    options = [
        json_option("the report", " (summary on stderr)"),
        click.option("--html", type=OUTPUT_FILE, help="Also write the report as an HTML page."),
        click.option("-o", "--output", type=OUTPUT_FILE, help="Write the report to FILE instead of stdout."),
        click.option(
            "-q", "--quiet", is_flag=True, help="Print no report (files are still written); the exit status tells."
        ),
        click.option(
            "--fail-on",
            type=click.Choice(["error", "warning", "info"]),
            default="error",
            show_default=True,
            help="Exit 1 when a finding is at or above this severity.",
        ),
        click.option("--strict", is_flag=True, help="Exit 3 when any check could not run (skipped)."),
        click.option(
            "--examples",
            type=click.IntRange(0, 100),
            default=5,
            show_default=True,
            help="Example ids/texts per finding.",
        ),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


@cli.command()
@store_options(many_histories=True)
@audit_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "prometheus"]),
    default="text",
    show_default=True,
    help="The report's format: json is --json; prometheus writes the figures as gauges in Prometheus text format "
    "(for the node exporter's textfile collector: -o DIR/mem0.prom, written atomically).",
)
@show_secrets_option
@hygiene_command
def audit(
    store: StoreOptions, as_json: bool, html: str | None, fail_on: str, strict: bool, examples: int, fmt: str
) -> None:
    """Diagnose a mem0 deployment: storage, history.db vs. the vector store, the ledger, content.

    A fleet of replicas keeps one history.db per host: give each with --history-db [LABEL=]PATH (repeated), or
    list them in hygiene.history_dbs; a memory in any host's history is not "missing from history".

    Only reads. Exit status: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input
    (a bad option, or a config or setting that cannot be read or used), 3 the audit could not run (or,
    with --strict, a check was skipped), 4 incomplete: the vector store's provider cannot be read here, so
    its checks did not run (never "clean").
    """
    if as_json and fmt not in ("text", "json"):
        raise click.UsageError(f"--json and --format {fmt} ask for two formats: give one")
    config = store.load()
    code = _run_audit(
        config,
        as_json=as_json or fmt == "json",
        html=html,
        fail_on=fail_on,
        strict=strict,
        examples=examples,
        description=store.config or "mem0 defaults",
        config_hint=_config_hint(store),
        fmt=fmt,
    )
    raise SystemExit(code)


# --------------------------------------------------------------------------------------------- demo


@cli.command()
@click.option(
    "--dir",
    "folder",
    default="mem0-hygiene-demo",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where to build the demo deployment (recreated if it is an earlier demo).",
)
@audit_options
@show_secrets_option
@hygiene_command
def demo(folder: str, as_json: bool, html: str | None, fail_on: str, strict: bool, examples: int) -> None:
    """Build a sandbox mem0 deployment with realistic troubles, then audit it. Offline, no API key.

    The vector store goes on a RAM disk (/dev/shm) when the machine has one, outside the folder: the output
    names it. Removing the folder leaves it there until the next demo run, which removes the RAM-disk stores
    of every demo folder that is gone; `rm -rf` the named path to remove it at once.
    """
    from ..demo import build_demo

    out = current_output()
    result = build_demo(folder)
    where = printable(result.folder)

    def say(line: str) -> None:
        if not out.quiet:
            click.echo(line, err=True)

    say(f"Built a demo deployment in {where} (config: {where}/config.json):")
    for item in result.planted:
        say(f"  - {printable(item)}")
    if result.outside:
        say(
            f"Outside the folder: {printable(result.outside)} (the RAM-disk store; remove it with "
            f"rm -rf {printable(result.outside)} when you remove the folder)"
        )
    for gone in result.removed:
        say(f"Removed the RAM-disk store of a demo folder that no longer exists: {printable(gone)}")
    say(f"Auditing it: mem0-hygiene audit --config {where}/config.json\n")
    _run_audit(
        result.config,
        as_json=as_json,
        html=html,
        fail_on=fail_on,
        strict=strict,
        examples=examples,
        description=f"demo ({result.folder}/config.json)",
        config_hint=f" --config {result.folder}/config.json",
    )
