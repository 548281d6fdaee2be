"""The ``mem0-hygiene`` command line: a click group, each command thin over a library call.

This module holds the group and the plumbing every command shares; the commands live in the
modules beside it, one per family, and register themselves on import (see the bottom of this file)."""

from __future__ import annotations

import os

os.environ.setdefault("MEM0_TELEMETRY", "False")

import contextlib  # noqa: E402
import functools  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any, TypeVar, cast  # noqa: E402

import click  # noqa: E402
from rich.console import Console  # noqa: E402

from .. import __version__  # noqa: E402
from ..errors import ConfigError, HygieneError  # noqa: E402
from ..render.text import human_size, printable, revealing_secrets, yes_no  # noqa: E402,F401  (shared)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mem0-hygiene")
def cli() -> None:
    """Keep an agent's mem0 memory true: audit it, prune it, review it, back it up."""


# --------------------------------------------------------------------------------------------- shared plumbing

F = TypeVar("F", bound=Callable[..., Any])


EXIT_BAD_INPUT = 2  # as click's own usage errors: a bad option, or a config or value the library refuses


class BadInput(click.ClickException):
    """``Error: MESSAGE`` and exit status 2: the input was wrong (a :class:`~mem0_hygiene.errors.ConfigError`:
    an unreadable or unusable config, a setting or a value out of range), not the stores."""

    exit_code = EXIT_BAD_INPUT


@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """Turn the library's errors into a clean message (no traceback): a :class:`ConfigError` exits 2 (bad
    input), any other :class:`HygieneError` exits 1. What the message quotes from a store or a file is made
    printable (credentials redacted, control characters visible)."""
    try:
        yield
    except ConfigError as exc:
        raise BadInput(printable(str(exc))) from exc
    except HygieneError as exc:
        raise click.ClickException(printable(str(exc))) from exc


def hygiene_command(func: F) -> F:
    """Decorator for a command body: a library error becomes ``Error: MESSAGE``, exit 2 for a
    :class:`ConfigError` and 1 for any other :class:`HygieneError` (see :func:`reported_errors`)."""

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
        from ..config_loader import load_config

        return load_config(self.config, qdrant_path=self.qdrant_path, collection=self.collection,
                           history_db=self.history_db, ledger=self.ledger)

    def load_for_maintenance(self) -> dict[str, Any]:
        """The same, with the offline embedder and LLM: for commands that only read or delete."""
        from ..config_loader import for_maintenance

        return for_maintenance(self.load())


STORE_OPTION_NAMES = ("config", "qdrant_path", "collection", "history_db", "ledger")


def store_options(func: F) -> F:
    """Add --config, --qdrant-path, --collection, --history-db, --ledger; pass them as ``store``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, None) for name in STORE_OPTION_NAMES}
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

    option = click.option("--show-secrets", "show_secrets", is_flag=True,
                          help="Show credentials found in memory text in full (redacted by default).")
    return cast(F, option(wrapper))


def console_for_output() -> Console:
    console = Console()
    if not console.is_terminal:  # pipes and tests: do not cut paths at 80 columns
        console = Console(width=max(console.width, 200))
    return console


def emit_json(data: Any) -> None:
    """Print a JSON-ready value as the command's JSON output (the one encoder: :func:`render.json.to_json`)."""
    from ..render.json import to_json

    click.echo(to_json(data))


def emit(result: Any, as_json: bool) -> None:
    """Print a result object: its ``to_dict()`` as JSON, or the object itself (it renders itself)."""
    if as_json:
        emit_json(result.to_dict())
    else:
        console_for_output().print(result)


def main() -> None:
    """Console-script entry point."""
    import logging

    # mem0 warns about optional extras (spaCy, fastembed) that maintenance commands never use.
    logging.getLogger("mem0").setLevel(logging.ERROR)
    cli()


# register the commands (one module per line)
from . import (  # noqa: E402
    audit,  # noqa: F401
    backup,  # noqa: F401
    consolidate,  # noqa: F401
    ledger,  # noqa: F401
    maintenance,  # noqa: F401
    mcp,  # noqa: F401
    store,  # noqa: F401
)
