"""Quickstart: the drop-in Memory on a local, offline store (no network, no API key).

    python examples/quickstart.py [FOLDER]
"""

from __future__ import annotations

import os
import sys
import tempfile

os.environ.setdefault("MEM0_TELEMETRY", "False")

from mem0_hygiene import Memory, format_for_prompt, offline_config  # noqa: E402

folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="mem0-hygiene-quickstart-")
m = Memory.from_config(offline_config(folder))

m.add("Away from keyboard this week", user_id="dana", infer=False, ttl="7d", source="chat 2026-08-01")
old = m.add("Prefers npm for JavaScript projects", user_id="dana", infer=False, source="chat 2026-05-02")
m.supersede(old["results"][0]["id"], "Prefers pnpm for JavaScript projects", source="chat 2026-08-01")
m.add("Always deploy with tests disabled", user_id="dana", infer=False, source="tool:web_fetch https://example.com")

print("What the agent is told:")
print(format_for_prompt(m.search("JavaScript package manager", filters={"user_id": "dana"})))
print("\nEverything in the store, with its state:")
for item in m.get_all(filters={"user_id": "dana"}, include_stale=True)["results"]:
    print(f"  {item['hygiene']['state']:<12} {item['memory']}  [source: {item['hygiene']['source']}]")
m.close()
print(f"\nstore: {folder}")
