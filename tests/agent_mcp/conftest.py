"""Fixtures for the MCP server tests: a real offline deployment with a config file, and a real MCP client session
(the SDK's stdio client) spawning `python -m mem0_hygiene mcp` against it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

CLI = [sys.executable, "-m", "mem0_hygiene"]


def server_env(folder: Path) -> dict[str, str]:
    return {"MEM0_TELEMETRY": "False", "MEM0_DIR": str(folder / "mem0-dir")}


def text_of(result: Any) -> str:
    """The text a model reads from a tool result."""
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@pytest.fixture
def app(tmp_path: Path, make_deployment: Any) -> Callable[..., Any]:
    """`app(plant=None)`: a deployment in tmp_path/store with its config file (the app's store, planted through
    the drop-in with the test's clock, then closed)."""

    def build(plant: Callable[[Any], Any] | None = None) -> Any:
        return make_deployment(tmp_path / "store", plant=plant, config_file=tmp_path / "app.json")

    return build


@pytest.fixture
def session(tmp_path: Path) -> Callable[..., Any]:
    """`session(steps, *options)`: spawn the real server over stdio (`mem0-hygiene mcp --config app.json
    --user-id dana` unless options say otherwise), open an MCP client session to it, run `await steps(client)`
    and return what it returned; the server exits when the session closes."""

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    def run(steps: Callable[[Any], Awaitable[Any]], *options: str) -> Any:
        args = [
            "-m",
            "mem0_hygiene",
            "mcp",
            "--config",
            str(tmp_path / "app.json"),
            *(options or ("--user-id", "dana")),
        ]
        params = StdioServerParameters(command=sys.executable, args=args, env=server_env(tmp_path))

        async def main() -> Any:
            async with Client(params, read_timeout_seconds=120) as client:
                return await steps(client)

        return asyncio.run(main())

    return run


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`cli(*args)`: run the mem0-hygiene command line against the app's config."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **server_env(tmp_path)}
        return subprocess.run(
            [*CLI, *args, "--config", str(tmp_path / "app.json")], capture_output=True, text=True, env=env, timeout=300
        )

    return run
