"""The ``mcp`` command: serve the memory tools to an agent over the Model Context Protocol."""

from __future__ import annotations

import click

from .group import StoreOptions, cli, hygiene_command, store_options


@cli.command("mcp")
@store_options
@click.option("--user-id", "user_id", metavar="USER", help="The user whose memories the session reads and writes.")
@click.option("--agent-id", "agent_id", metavar="AGENT", help="The agent whose memories the session reads and writes.")
@click.option(
    "--http",
    "http",
    metavar="HOST:PORT",
    default=None,
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback addresses only: the "
    "tools have no authentication).",
)
@hygiene_command
def mcp_command(store: StoreOptions, user_id: str | None, agent_id: str | None, http: str | None) -> None:
    """Serve memory tools to an agent over MCP (stdio by default): remember, recall, correct, invalidate,
    confirm, forget, review, and the audit summary and review queue as resources.

    The session works in one scope, fixed here: give --user-id and/or --agent-id. This process opens the app's
    store through the drop-in Memory (a local Qdrant folder can have one process at a time). Needs the mcp
    extra: pip install 'mem0-hygiene[mcp]'.
    """
    from ..mcp_server import parse_http, require_sdk, serve
    from ..memory.scope import scope_of

    if not scope_of(user_id, agent_id, None):
        raise click.UsageError("give --user-id USER and/or --agent-id AGENT: the scope every tool call works in")
    require_sdk()
    if http:
        parse_http(http)
    serve(store.load(), user_id=user_id, agent_id=agent_id, http=http, description=store.config or "")
