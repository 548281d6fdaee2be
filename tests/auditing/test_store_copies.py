"""`where` and the audit's STORE_COPIES list every copy of the stores (path, kind, age, size) from the one
registry; a copy older than the retention is a warning whose fix, run, removes it."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.actions.where import where
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.cli import cli
from mem0_hygiene.report import Severity

U = {"user_id": "dana"}


@pytest.fixture
def deployment(make_deployment, persistent_dir):
    def plant(m):
        m.add("Dana works on billing", **U, infer=False, source="chat")

    return make_deployment(persistent_dir / "app", plant=plant, config_file=persistent_dir / "mem0.json")


def test_where_lists_the_backups_and_the_stores_restore_moved_aside(deployment, persistent_dir, clock):
    cfg = deployment.config
    assert where(cfg).copies == ()
    made = backup(cfg, persistent_dir / "backups")
    clock.advance(days=2)
    done = restore(cfg, made.path)

    found = where(cfg)
    kinds = {c.path: c.kind for c in found.copies}
    assert kinds == {made.path: "backup_set", **{s.replaced_to: "replaced_aside" for s in done.stores}}
    doc = found.to_dict()
    by_path = {c["path"]: c for c in doc["copies"]}
    assert by_path[made.path]["age_days"] == 2.0 and by_path[made.path]["size_bytes"] == made.size_bytes + len(
        (Path(made.path) / "manifest.json").read_bytes()
    )
    assert by_path[done.store("history_db").replaced_to]["roles"] == ["history_db"]

    out = CliRunner().invoke(cli, ["where", "--config", str(deployment.config_path)], catch_exceptions=False)
    assert out.exit_code == 0 and "copies of the stores" in out.output and "replaced_aside" in out.output
    data = json.loads(CliRunner().invoke(cli, ["where", "--config", str(deployment.config_path), "--json"]).stdout)
    assert {c["path"] for c in data["copies"]} == set(kinds)
    assert data["locations"][0]["role"] == "vector_store"


def test_store_copies_is_info_within_the_retention_and_a_warning_past_it(deployment, persistent_dir, clock):
    cfg = deployment.config
    dest = persistent_dir / "backups"
    assert audit(cfg).get("STORE_COPIES") is None  # no copies: nothing to say
    old = backup(cfg, dest)
    clock.advance(days=1)
    info = audit(cfg).get("STORE_COPIES")
    assert info.severity is Severity.INFO and info.count == 1 and "180d" in info.title
    assert f"backup_set {old.path} (1.0 days old" in info.examples[0]

    clock.advance(days=180)
    done = restore(cfg, old.path)  # fresh copies beside a stale backup
    warn = audit(cfg).get("STORE_COPIES")
    assert warn.severity is Severity.WARNING and warn.count == 1 and "1 of 4 copies" in warn.title
    assert len(warn.examples) == 1 and warn.examples[0].startswith(f"backup_set {old.path} (181.0 days old, ")
    assert warn.details["stale"] == [old.path]
    assert f"mem0-hygiene backup {dest} --keep 1" in warn.fix

    backup(cfg, dest, keep=1)  # the fix: a new backup whose rotation removes the stale one
    assert not Path(old.path).exists()
    after = audit(cfg).get("STORE_COPIES")
    assert after.severity is Severity.INFO and old.path not in " ".join(after.examples)

    clock.advance(days=200)  # now the stores restore moved aside are stale too
    stale = audit(cfg).get("STORE_COPIES")
    assert stale.severity is Severity.WARNING
    removals = [part for part in stale.fix.split("; ") if part.startswith("rm ")]
    assert len(removals) == 3
    for command in removals:
        subprocess.run(shlex.split(command), check=True)
    for s in done.stores:
        assert not Path(s.replaced_to).exists()
    left = audit(cfg).get("STORE_COPIES")
    assert {c["kind"] for c in left.details["copies"]} == {"backup_set"}


def test_an_unreadable_registry_is_a_warning_naming_the_file(deployment):
    cfg = deployment.config
    (deployment.folder / "hygiene.copies.json").write_text("[]")
    finding = audit(cfg).get("STORE_COPIES")
    assert finding.severity is Severity.WARNING and "hygiene.copies.json" in finding.examples[0]
    assert "not a mem0-hygiene registry of copies" in where(cfg).copies_problem
    assert "cannot be listed" in str(where(cfg).notes())


def test_one_copy_is_counted_in_the_singular(deployment, persistent_dir):
    cfg = deployment.config
    backup(cfg, persistent_dir / "backups")
    assert audit(cfg).get("STORE_COPIES").title.startswith("1 copy of the stores (")
    out = CliRunner().invoke(cli, ["where", "--config", str(deployment.config_path)], catch_exceptions=False)
    assert "1 copy of the stores holds the same memories" in " ".join(out.output.split())
