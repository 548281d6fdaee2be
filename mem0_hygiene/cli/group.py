"""The ``mem0-hygiene`` click group and the plumbing every command shares: exit codes, error messages, the
store and output options, emitting results. The commands live in the modules beside it, one per family, and
register themselves on the group when :mod:`mem0_hygiene.cli` imports them."""

from __future__ import annotations

import os

os.environ.setdefault("MEM0_TELEMETRY", "False")

import contextlib  # noqa: E402
import functools  # noqa: E402
import re  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import TYPE_CHECKING, Any, TypeVar, cast  # noqa: E402

import click  # noqa: E402

if TYPE_CHECKING:
    from rich.console import Console

from ..display.text import human_size, printable, revealing_secrets, yes_no  # noqa: E402,F401  (shared)
from ..errors import ConfigError, HygieneError  # noqa: E402
from ..version import __version__  # noqa: E402


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mem0-hygiene")
def cli() -> None:
    """Keep an agent's mem0 memory true: audit it, prune it, review it, back it up."""


# --------------------------------------------------------------------------------------------- shared plumbing

F = TypeVar("F", bound=Callable[..., Any])


EXIT_FINDINGS = 1  # only for what a command found: audit findings, text an erasure could not remove
EXIT_BAD_INPUT = 2  # as click's own usage errors: a bad option, or a config, id or value the library refuses
EXIT_FAILED = 3  # the command could not run: a locked or missing store, a damaged ledger, a file it cannot write
EXIT_INCOMPLETE = 4  # audit only: the vector store's provider cannot be read, so its checks did not run
EXIT_INTERRUPTED = 130  # stopped by Ctrl-C (SIGINT), as shells report it: what was done is kept

DEBUG_ENV = "MEM0_HYGIENE_DEBUG"
"""Set to 1 to see the traceback of an unexpected error instead of its one-line message."""


class BadInput(click.ClickException):
    """``Error: MESSAGE`` and exit status 2: the input was wrong (a :class:`~mem0_hygiene.errors.ConfigError`:
    an unreadable or unusable config, a setting or a value out of range; an unknown memory id), not the stores."""

    exit_code = EXIT_BAD_INPUT


class CouldNotRun(click.ClickException):
    """``Error: MESSAGE`` and exit status 3: the command could not run (a locked or missing store, a damaged
    ledger or backup set, a file it cannot read or write)."""

    exit_code = EXIT_FAILED


class Stopped(click.ClickException):
    """``Interrupted: MESSAGE`` and exit status 130: Ctrl-C stopped the command at a safe point (or at once, on
    a second Ctrl-C); the message says how far it got and that running it again finishes the rest."""

    exit_code = EXIT_INTERRUPTED

    def format_message(self) -> str:
        return self.message

    def show(self, file: Any = None) -> None:
        click.echo(f"Interrupted: {self.format_message()}", err=True)


@contextlib.contextmanager
def stop_at_safe_points() -> Iterator[None]:
    """Within the block, the first Ctrl-C (SIGINT) asks the running operation to stop at its next safe point
    (:func:`mem0_hygiene.progress.request_stop`) and says so; a second one stops at once. Only in the main
    thread (where Python delivers signals); the previous handler is put back after."""
    import signal
    import threading

    from ..progress import clear_stop, request_stop

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    asked: list[int] = []

    def on_sigint(signum: int, frame: Any) -> None:
        if asked:
            raise KeyboardInterrupt
        asked.append(signum)
        request_stop()
        click.echo("\nstopping at the next safe point (Ctrl-C again to stop at once)", err=True)

    previous = signal.signal(signal.SIGINT, on_sigint)
    clear_stop()
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        clear_stop()


def input_errors() -> tuple[type[BaseException], ...]:
    """The library errors that mean "the request was wrong" (exit 2), not "the stores or the machine"."""
    from ..errors import MemoryNotFound, MissingSource, SecretRefused, StateError

    return (ConfigError, MemoryNotFound, MissingSource, SecretRefused, StateError)


_CONFIG_HINT = re.compile(r"[Pp]ass the app's config with --config FILE( \(or [^)]*\))?")


def fitted_message(message: str) -> str:
    """A library message made printable, its generic "pass the app's config with --config FILE" advice fitted
    to what was typed: when ``--config`` was given, the advice is to check that it names the app's config."""
    ctx = click.get_current_context(silent=True)
    given = ctx.params.get("config") if ctx is not None else None
    if given:
        message = _CONFIG_HINT.sub(
            f"check that --config {given} is the app's config (the paths it gives are named above)", message
        )
    return printable(message)


def os_error_message(exc: OSError) -> str:
    """``cannot write /x/y: No such file or directory`` and what to do, from an OSError."""
    what = exc.filename or "a file"
    reason = exc.strerror or str(exc)
    return (
        f"cannot use {what}: {reason}; check that the path exists and that you may read and write it"
        if exc.filename
        else f"{reason}; check the paths given and the free space"
    )


def unexpected_message(exc: BaseException) -> str:
    """The one line shown for an error the tool did not foresee (a network error from the app's embedder,
    a bug): its type and message, and how to see the traceback."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}{': ' + text if text else ''} (unexpected; set {DEBUG_ENV}=1 to see the traceback)"


@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """Turn every error into one ``Error:`` line (no traceback) and an exit status that says what happened: 2
    for bad input (a :class:`ConfigError`, an unknown memory id, a memory in the wrong state), 3 when the
    command could not run (any other :class:`HygieneError`, a file it cannot use, an unexpected error). What
    the message quotes from a store or a file is made printable (credentials redacted, control characters
    visible)."""
    from ..errors import Interrupted

    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
        raise
    except Interrupted as exc:
        raise Stopped(printable(str(exc))) from exc
    except KeyboardInterrupt as exc:
        raise Stopped(
            "stopped at once (a second Ctrl-C, or between safe points); every multi-step operation is "
            "journaled, so nothing is half-done: running the same command again finishes what it "
            "started"
        ) from exc
    except input_errors() as exc:
        raise BadInput(fitted_message(str(exc))) from exc
    except HygieneError as exc:
        raise CouldNotRun(fitted_message(str(exc))) from exc
    except OSError as exc:
        if os.environ.get(DEBUG_ENV):
            raise
        raise CouldNotRun(printable(os_error_message(exc))) from exc
    except Exception as exc:
        if os.environ.get(DEBUG_ENV):
            raise
        raise CouldNotRun(printable(unexpected_message(exc))) from exc


def hygiene_command(func: F) -> F:
    """Decorator for a command body: an error becomes one ``Error: MESSAGE`` line, exit 2 for bad input and 3
    when the command could not run (see :func:`reported_errors`); Ctrl-C stops it at a safe point, saying how
    far it got, with exit 130 (see :func:`stop_at_safe_points`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with stop_at_safe_points(), reported_errors():
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
    history_dbs: tuple[str, ...] = ()  # audit: every --history-db [LABEL=]PATH given (one per host)

    def load(self) -> dict[str, Any]:
        """The app's mem0 config dict with the shortcuts applied ({} = mem0's defaults)."""
        from ..config_loader import load_config

        config = load_config(
            self.config,
            qdrant_path=self.qdrant_path,
            collection=self.collection,
            history_db=self.history_db,
            ledger=self.ledger,
        )
        if self.history_dbs:  # the files given replace the config's hygiene.history_dbs
            config["hygiene"] = {**dict(config.get("hygiene") or {}), "history_dbs": list(self.history_dbs)}
        return config

    def load_for_maintenance(self) -> dict[str, Any]:
        """The same, with the offline embedder and LLM: for commands that only read or delete."""
        from ..config_loader import for_maintenance

        return for_maintenance(self.load())


STORE_OPTION_NAMES = ("config", "qdrant_path", "collection", "history_db", "ledger")


def store_options(func: F | None = None, *, many_histories: bool = False) -> Any:
    """Add --config, --qdrant-path, --collection, --history-db, --ledger; pass them as ``store``.
    ``many_histories``: --history-db may repeat, as ``[LABEL=]PATH`` (one per host; ``StoreOptions.history_dbs``)."""
    if func is None:
        return functools.partial(store_options, many_histories=many_histories)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, None) for name in STORE_OPTION_NAMES}
        if many_histories:
            from ..stores.history import split_label

            entries = tuple(values["history_db"] or ())
            values["history_db"] = split_label(entries[0])[1] if entries else None
            values["history_dbs"] = entries
        kwargs["store"] = StoreOptions(**values)
        return func(*args, **kwargs)

    options = [
        click.option(
            "--config",
            "config",
            metavar="FILE|MODULE:ATTR",
            help="The app's mem0 config: a JSON/YAML file, or module:ATTRIBUTE naming a dict "
            "(or a function returning one). Default: mem0's defaults.",
        ),
        click.option("--qdrant-path", type=click.Path(), help="Local Qdrant folder (vector_store.config.path)."),
        click.option("--collection", help="Vector-store collection (vector_store.config.collection_name)."),
        click.option(
            "--history-db",
            type=click.Path(dir_okay=False),
            multiple=many_histories,
            metavar="[LABEL=]PATH" if many_histories else None,
            help="mem0's history database; repeat it for each host's, LABEL=PATH to name the host "
            "(default: the file's folder name)."
            if many_histories
            else "mem0's history database.",
        ),
        click.option("--ledger", type=click.Path(dir_okay=False), help="The hygiene ledger (hygiene.ledger_path)."),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


def json_option(what: str = "the result", extra: str = "") -> Callable[[F], F]:
    """The ``--json`` flag every reporting command shares, passed as ``as_json``."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as JSON{extra}.")


def show_secrets_option(func: F) -> F:
    """The ``--show-secrets`` flag of the commands that print memory text: without it every output of the
    command (tables, JSON, prompts, the audit's examples) shows credentials redacted."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with revealing_secrets(bool(kwargs.pop("show_secrets", False))):
            return func(*args, **kwargs)

    option = click.option(
        "--show-secrets",
        "show_secrets",
        is_flag=True,
        help="Show credentials found in memory text in full (redacted by default).",
    )
    return cast(F, option(wrapper))


# --------------------------------------------------------------------------------------------- output

OUTPUT_KEY = "mem0_hygiene.output"
ROWS_SHOWN = 20
"""How many rows of a long result list a command prints unless given ``--all``."""


@dataclass(frozen=True)
class OutputOptions:
    """Where a command's report goes (see :func:`output_options`).

    Fields:
        file: ``-o/--output FILE``: the report is written there, not to stdout.
        quiet: ``-q/--quiet``: print no report (errors and the exit status still tell what happened).
        show_all: ``--all``: print every row of a long list (else the first :data:`ROWS_SHOWN` and a summary).
    """

    file: str | None = None
    quiet: bool = False
    show_all: bool = False


def current_output() -> OutputOptions:
    """The output options of the command running now (defaults outside a command)."""
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if OUTPUT_KEY in ctx.meta:
            return cast(OutputOptions, ctx.meta[OUTPUT_KEY])
        ctx = ctx.parent
    return OutputOptions()


def output_options(func: F) -> F:
    """Add ``-o/--output FILE``, ``-q/--quiet`` and ``--all`` to a command that prints a report; they are taken
    out of the command's arguments and read back with :func:`current_output` by :func:`emit`."""
    from .params import OUTPUT_FILE

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        options = OutputOptions(
            file=kwargs.pop("output_file", None),
            quiet=bool(kwargs.pop("quiet", False)),
            show_all=bool(kwargs.pop("show_all", False)),
        )
        click.get_current_context().meta[OUTPUT_KEY] = options
        return func(*args, **kwargs)

    options = [
        click.option(
            "-o",
            "--output",
            "output_file",
            type=OUTPUT_FILE,
            default=None,
            help="Write the report to FILE instead of stdout (plain text, or JSON with --json).",
        ),
        click.option("-q", "--quiet", is_flag=True, help="Print no report and no progress; the exit status tells."),
        click.option(
            "--all",
            "show_all",
            is_flag=True,
            help=f"Print every row of a long list (default: a summary and the first {ROWS_SHOWN}).",
        ),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


def color_wanted(is_terminal: bool) -> bool:
    """Colour or not, by the conventions: ``NO_COLOR`` (any value) turns it off, else ``FORCE_COLOR`` turns it
    on, else colour only on a terminal."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return is_terminal


def console_for_output(stderr: bool = False) -> Console:
    """The console a command prints to: rich honours ``NO_COLOR`` and ``FORCE_COLOR``; a pipe gets wide lines
    (paths are never cut at 80 columns where nobody reads them as a screen)."""
    from rich.console import Console

    console = Console(stderr=stderr)
    if not console.is_terminal:
        console = Console(stderr=stderr, width=max(console.width, 200))
    return console


def render_plain(renderable: Any, width: int = 100) -> str:
    """A renderable as plain text (no colour, trailing spaces removed), as ``-o FILE`` writes it."""
    import io

    from rich.console import Console

    console = Console(
        file=io.StringIO(),
        width=width,
        no_color=True,
        color_system=None,
        highlight=False,
        emoji=False,
        force_terminal=False,
    )
    with rows_limit():
        console.print(renderable, crop=False)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in text.split("\n"))


@contextlib.contextmanager
def rows_limit() -> Iterator[None]:
    """Within the block, result tables show their first :data:`ROWS_SHOWN` rows unless ``--all`` was given."""
    from ..display.tables import rows_shown

    with rows_shown(None if current_output().show_all else ROWS_SHOWN):
        yield


def write_output(text: str, what: str = "report") -> None:
    """Write a command's report to ``-o FILE`` (and say so on stderr), or print it on stdout; nothing with
    ``--quiet`` (the file is still written)."""
    out = current_output()
    if out.file:
        with open(out.file, "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
        if not out.quiet:
            click.echo(f"wrote the {what} to {printable(out.file)}", err=True)
    elif not out.quiet:
        click.echo(text, nl=not text.endswith("\n"))


def emit_json(data: Any) -> None:
    """Print a JSON-ready value as the command's JSON output (the one encoder: :func:`render.json.to_json`)."""
    from ..render.json import to_json

    write_output(to_json(data))


def emit_text(renderable: Any) -> None:
    """Print a renderable (a result renders itself): to stdout, or as plain text to ``-o FILE``."""
    out = current_output()
    if out.file:
        write_output(render_plain(renderable))
    elif not out.quiet:
        with rows_limit():
            console_for_output().print(renderable, crop=False)


def emit(result: Any, as_json: bool) -> None:
    """Print a result object: its ``to_dict()`` as JSON, or the object itself (it renders itself)."""
    if as_json:
        emit_json(result.to_dict())
    else:
        emit_text(result)


def note(message: str) -> None:
    """A line for the user on stderr (not part of the report), unless ``--quiet``."""
    if not current_output().quiet:
        click.echo(message, err=True)


def main() -> None:
    """Console-script entry point."""
    import logging

    # mem0 warns about optional extras (spaCy, fastembed) that maintenance commands never use.
    logging.getLogger("mem0").setLevel(logging.ERROR)
    from .notes import install

    install()  # local Qdrant's "more than 20,000 points" warning, once, as our own note
    cli()
