"""The same tools over streamable HTTP (`mem0-hygiene mcp --http 127.0.0.1:PORT`) on loopback, and the refusal
of any address beyond it (the tools have no authentication)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'mem0-hygiene[mcp]'")

from .conftest import CLI, server_env, text_of  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_tools_answer_over_streamable_http_on_loopback(app, tmp_path):
    from mcp import Client

    app(plant=lambda m: m.add("Dana's team ships on Thursdays", user_id="dana", infer=False, source="chat"))
    port = free_port()
    proc = subprocess.Popen(
        [*CLI, "mcp", "--config", str(tmp_path / "app.json"), "--user-id", "dana", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **server_env(tmp_path)},
    )
    try:
        seen = []
        assert proc.stderr is not None
        for line in proc.stderr:  # blocks until uvicorn says it listens (or the server exits: EOF)
            seen.append(line)
            if f"Uvicorn running on http://127.0.0.1:{port}" in line:
                break
        else:
            pytest.fail("the server exited before listening:\n" + "".join(seen))

        async def main():
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=120) as c:
                names = {t.name for t in (await c.list_tools()).tools}
                added = await c.call_tool("remember", {"text": "Dana's team freezes deploys in December"})
                found = await c.call_tool("recall", {"query": "Dana's team ships on Thursdays"})
                bad = await c.call_tool("forget", {"memory_id": "nope"})
                return names, added, found, bad

        names, added, found, bad = asyncio.run(main())
        assert {"remember", "recall", "correct", "forget"} <= names
        assert not added.is_error and added.structured_content["source"] == "mcp:mcp"
        assert "- Dana's team ships on Thursdays (confirmed 2026-08-01)" in text_of(found)
        assert bad.is_error and proc.poll() is None  # a refused call, a server still running
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("address", ["0.0.0.0:8765", "192.168.1.10:8765", "example.com:80", "127.0.0.1", "::1:0"])
def test_http_off_loopback_or_malformed_is_refused_before_anything_opens(app, tmp_path, address):
    app()
    done = subprocess.run(
        [*CLI, "mcp", "--config", str(tmp_path / "app.json"), "--user-id", "dana", "--http", address],
        capture_output=True,
        text=True,
        env={**os.environ, **server_env(tmp_path)},
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("Error: --http") and done.stdout == ""
