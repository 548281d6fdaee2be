"""The ``mem0-hygiene`` command line: a click group, each command thin over a library call."""

from __future__ import annotations

import os

os.environ.setdefault("MEM0_TELEMETRY", "False")

import click  # noqa: E402

from . import __version__  # noqa: E402


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mem0-hygiene")
def cli() -> None:
    """Keep an agent's mem0 memory true: audit it, prune it, review it, back it up."""


def main() -> None:
    """Console-script entry point."""
    cli()
