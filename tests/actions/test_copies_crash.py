"""A backup or restore killed with SIGKILL at each of its steps (a real child process, kill -9 from inside a
patched step): the next run removes the temporary copies the crash left, completes, and every copy that
remains on disk is in the registry."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.stores.copies import list_copies
from mem0_hygiene.stores.qdrant import collection_counts

U = {"user_id": "dana"}

CHILD = textwrap.dedent("""
    import json, os, signal, sys
    from mem0_hygiene.actions import backup as backup_mod, restore as restore_mod
    from mem0_hygiene.stores import qdrant as qdrant_local

    config, dest, src, point = json.loads(sys.argv[1])

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def after(module, name, condition=lambda *a: True):
        real = getattr(module, name)
        def step(*args, **kwargs):
            out = real(*args, **kwargs)
            if condition(*args):
                die()
            return out
        setattr(module, name, step)

    if point == "backup:qdrant-copied":
        after(qdrant_local, "copy_store")
    elif point == "backup:manifest-written":
        after(backup_mod, "write_manifest")
    elif point == "backup:set-renamed":
        after(os, "rename", lambda a, b: ".partial-" in str(a))
    elif point == "restore:first-store-staged":
        after(restore_mod, "_check_staged")
    elif point == "restore:first-store-moved-aside":
        after(os, "rename", lambda a, b: ".replaced-" in str(b))
    elif point == "restore:all-swapped":
        after(restore_mod, "_verify_restored")
    if point.startswith("backup"):
        backup_mod.backup(config, dest)
    else:
        restore_mod.restore(config, src)
    print("the step was never reached", flush=True)
""")


def run_child_until_killed(config: dict, dest: Path, src: str | None, point: str) -> None:
    cfg = {k: v for k, v in config.items() if k != "hygiene"}  # the clock stays in this process
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([cfg, str(dest), src, point])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout, proc.stderr[-2000:])


def temporaries(*folders: Path) -> list[str]:
    return sorted(
        str(p) for f in folders if f.exists() for p in f.rglob("*") if ".partial-" in p.name or ".restoring-" in p.name
    )


def asides_on_disk(folder: Path) -> set[str]:
    """Every store restore moved aside (SQLite sidecars belong to their database)."""
    return {
        str(p) for p in folder.iterdir() if ".replaced-" in p.name and not p.name.endswith(("-wal", "-shm", "-journal"))
    }


@pytest.fixture
def deployment(make_deployment, persistent_dir):
    def plant(m):
        for text in ("Dana works on billing", "Dana prefers pnpm", "Standup is at 9:30"):
            m.add(text, **U, infer=False, source="chat")

    return make_deployment(persistent_dir / "app", plant=plant)


@pytest.mark.parametrize("point", ["backup:qdrant-copied", "backup:manifest-written", "backup:set-renamed"])
def test_a_backup_killed_mid_way_leaves_nothing_unaccounted_after_the_next_run(deployment, persistent_dir, point):
    cfg, app, dest = deployment.config, deployment.folder, persistent_dir / "backups"
    ledger, history = str(app / "hygiene.db"), str(app / "history.db")
    run_child_until_killed(cfg, dest, None, point)
    left = temporaries(dest)
    if point == "backup:set-renamed":
        assert left == []  # the set was in place: and registered before it got there
        (crashed,) = [c.path for c in list_copies(ledger, history)]
        assert Path(crashed).parent == dest
    else:
        assert len(left) == 1 and any(p.is_file() for p in Path(left[0]).rglob("*"))  # a real partial set

    made = backup(cfg, dest)

    assert temporaries(dest, app) == []
    assert made.points == 3 and not made.dry_run
    assert list(made.leftovers) == left
    sets = sorted(str(p) for p in dest.iterdir())
    assert {c.path for c in list_copies(ledger, history) if c.kind == "backup_set"} == set(sets)
    assert restore(cfg, made.path, dry_run=True).checked_files == made.files


@pytest.mark.parametrize(
    "point", ["restore:first-store-staged", "restore:first-store-moved-aside", "restore:all-swapped"]
)
def test_a_restore_killed_mid_way_leaves_nothing_unaccounted_after_the_next_run(deployment, persistent_dir, point):
    cfg, app, dest = deployment.config, deployment.folder, persistent_dir / "backups"
    ledger, history = str(app / "hygiene.db"), str(app / "history.db")
    made = backup(cfg, dest)
    run_child_until_killed(cfg, dest, made.path, point)
    left = temporaries(app)
    if point != "restore:all-swapped":
        assert left  # the crash really left a staging copy beside the stores
    if point == "restore:first-store-moved-aside":
        assert not (app / "qdrant").exists()  # the crash came between moving the store aside and putting it back
    assert asides_on_disk(app) <= {c.path for c in list_copies(ledger, history)}  # accounted for at once

    done = restore(cfg, made.path)

    assert temporaries(app, dest) == []
    if point == "restore:first-store-staged":  # before the journal: nothing had changed, the staging copies go
        assert set(done.leftovers) == set(left) and not done.resumed
    else:  # journaled: the rerun finished the swap with the staged copies
        assert done.leftovers == () and done.resumed == "finished"
        assert not (app / "hygiene.restore-journal.json").exists()
    assert collection_counts(str(app / "qdrant")) == {"mem0": 3}
    assert done.store("vector_store").counts == {"mem0": 3}
    registered = {c.path for c in list_copies(ledger, history) if c.kind == "replaced_aside"}
    assert asides_on_disk(app) == registered and registered
