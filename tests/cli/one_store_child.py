"""Run inside a private mount namespace (see test_one_store.py): a plain mem0 app with mem0's default stores
(/tmp/qdrant, ~/.mem0/history.db) in a sandbox HOME, then every read and dry-run command of the CLI, with a
listing of every file under HOME and /tmp (path, type, mode, size, sha256) before and after each. Prints one
JSON document on stdout for the test to judge."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

HOME = os.environ["HOME"]
CLI = [sys.executable, "-m", "mem0_hygiene"]
APP = """
import sys
from mem0 import Memory
from mem0_hygiene.config import build_mem0_config
m = Memory(build_mem0_config({"embedder": {"provider": "offline"}, "llm": {"provider": "offline"}}))
for text in sys.argv[1:]:
    print(m.add(text, user_id="dana", infer=False)["results"][0]["id"])
m.close()
"""


def listing() -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for root in (HOME, "/tmp"):
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                path = os.path.join(folder, name)
                st = os.lstat(path)
                if os.path.islink(path):
                    out[path] = ["link", os.readlink(path)]
                elif os.path.isdir(path):
                    out[path] = ["dir", oct(st.st_mode)]
                else:
                    with open(path, "rb") as fh:
                        digest = hashlib.sha256(fh.read()).hexdigest()
                    out[path] = ["file", oct(st.st_mode), st.st_size, digest]
    return out


def app_writes(*texts: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", APP, *texts], capture_output=True, text=True, check=True)
    return done.stdout.split()


def cli(*args: str) -> dict[str, object]:
    done = subprocess.run([*CLI, *args, "--config", os.path.join(HOME, "app.json")], capture_output=True, text=True)
    return {"args": list(args), "code": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def main() -> None:
    with open(os.path.join(HOME, "app.json"), "w") as fh:
        json.dump({"embedder": {"provider": "offline"}, "llm": {"provider": "offline"}}, fh)
    first, second = app_writes("Prefers pnpm", "Standup is at 9:30")
    reads = [
        ["audit", "--json"],
        ["where", "--json"],
        ["prune", "--dry-run"],
        ["review", "--list"],
        ["forget", first, "--dry-run"],
        ["forget", first, "--scrub", "--dry-run"],
        ["confirm", first, "--dry-run"],
        ["invalidate", first, "--reason", "moved on", "--dry-run"],
        ["supersede", first, "Prefers bun", "--dry-run"],
        ["digest"],
        ["history", first],
        ["relocate", "--to", os.path.join(HOME, "moved"), "--dry-run"],
        ["backup", os.path.join(HOME, "backups"), "--dry-run"],
    ]
    steps = []
    before = listing()
    for args in reads:
        result = cli(*args)
        after = listing()
        result["changed"] = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        steps.append(result)
        before = after
    (third,) = app_writes("Deploys with Kubernetes now")  # the plain app goes on writing between commands
    later = {
        "third": third,
        "digest": cli("digest", "--json"),
        "forget": cli("forget", third, "--dry-run", "--json"),
        "audit": cli("audit", "--json"),
        "where": cli("where", "--json"),
    }
    pruned = cli("prune")  # a real (not dry) run: it works where the store is and moves nothing
    print(
        json.dumps(
            {"ids": [first, second], "steps": steps, "later": later, "prune": pruned, "after_prune": sorted(listing())}
        )
    )


if __name__ == "__main__":
    main()
