"""The ``mem0-hygiene`` command line: a click group, each command thin over a library call.

The group and the plumbing every command shares live in :mod:`.group`; the commands live in the modules beside
it, one per family, and register themselves on the group when imported here. This module imports them and
re-exports the group's names (``from mem0_hygiene.cli import cli, main``)."""

from __future__ import annotations

import os

os.environ.setdefault("MEM0_TELEMETRY", "False")

# the commands (one module per family) register themselves on the group when imported
from . import (  # noqa: E402
    audit,  # noqa: F401
    backup,  # noqa: F401
    consolidate,  # noqa: F401
    ledger,  # noqa: F401
    maintenance,  # noqa: F401
    mcp,  # noqa: F401
    migrate,  # noqa: F401
    portable,  # noqa: F401
    reads,  # noqa: F401
    store,  # noqa: F401
)
from .group import (  # noqa: E402
    DEBUG_ENV,
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    OUTPUT_KEY,
    ROWS_SHOWN,
    STORE_OPTION_NAMES,
    BadInput,
    CouldNotRun,
    OutputOptions,
    Stopped,
    StoreOptions,
    cli,
    color_wanted,
    console_for_output,
    current_output,
    emit,
    emit_json,
    emit_text,
    fitted_message,
    human_size,
    hygiene_command,
    input_errors,
    json_option,
    main,
    note,
    os_error_message,
    output_options,
    printable,
    render_plain,
    reported_errors,
    revealing_secrets,
    rows_limit,
    show_secrets_option,
    stop_at_safe_points,
    store_options,
    unexpected_message,
    write_output,
    yes_no,
)

__all__ = [
    "BadInput",
    "cli",
    "color_wanted",
    "console_for_output",
    "CouldNotRun",
    "current_output",
    "DEBUG_ENV",
    "emit",
    "emit_json",
    "emit_text",
    "EXIT_BAD_INPUT",
    "EXIT_FAILED",
    "EXIT_FINDINGS",
    "EXIT_INTERRUPTED",
    "fitted_message",
    "human_size",
    "hygiene_command",
    "input_errors",
    "json_option",
    "main",
    "note",
    "os_error_message",
    "OUTPUT_KEY",
    "output_options",
    "OutputOptions",
    "printable",
    "render_plain",
    "reported_errors",
    "revealing_secrets",
    "rows_limit",
    "ROWS_SHOWN",
    "show_secrets_option",
    "stop_at_safe_points",
    "Stopped",
    "STORE_OPTION_NAMES",
    "store_options",
    "StoreOptions",
    "unexpected_message",
    "write_output",
    "yes_no",
]
