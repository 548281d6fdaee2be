"""Quickstart: the drop-in Memory on a local, offline store (no network, no API key); the README's own example.

    python examples/quickstart.py
"""

import tempfile
from datetime import datetime, timezone

from mem0_hygiene import Memory, format_for_prompt, offline_config

today = datetime(2026, 5, 2, tzinfo=timezone.utc)  # the example replays two chats, May and August
config = offline_config(tempfile.mkdtemp())  # local Qdrant, offline embedder and LLM: no network, no API key
config["hygiene"] = {"require_source": True, "clock": lambda: today}  # leave the clock out and it is now
m = Memory.from_config(config)  # a real app: its usual mem0 config dict, plus the optional "hygiene" section

old = m.add("Uses npm as package manager", user_id="dana", infer=False, source="chat 2026-05-02")["results"][0]["id"]
today = datetime(2026, 8, 1, tzinfo=timezone.utc)
m.add("Away from keyboard this week", user_id="dana", infer=False, ttl="7d", source="chat 2026-08-01")
m.supersede(old, "Uses pnpm as package manager", source="chat 2026-08-01")  # npm is hidden, the chain is kept
print(format_for_prompt(m.search("package manager", filters={"user_id": "dana"})))
print(format_for_prompt(m.search("away from keyboard", filters={"user_id": "dana"})))
m.close()
# - Uses pnpm as package manager (confirmed 2026-08-01)
# - Away from keyboard this week (confirmed 2026-08-01, until 2026-08-08)
