"""The portable export and import on local Qdrant: credentials redacted unless asked, a file cut short or changed
refused before anything is written, the two files of one export kept together, a target holding other memories
refused, a dry run writing nothing, an import stopped midway finished by the next run without duplicates, and a
file without vectors (or with another length) embedded by the target's embedder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, offline_config, progress
from mem0_hygiene.errors import Interrupted
from mem0_hygiene.maintenance import export, import_
from mem0_hygiene.stores.portable import PortableFileError, history_path
from mem0_hygiene.stores.vector import open_vector_store

from ..providers.plain_fill import AWS_KEY, MEMORIES, fill_plain


def drop_in_store(folder: Path, clock: Any, n: int = 3, dims: int | None = None) -> dict[str, Any]:
    config = offline_config(folder, hygiene={"clock": clock})
    if dims:
        config["embedder"]["config"] = {"embedding_dims": dims}
        config["vector_store"]["config"]["embedding_model_dims"] = dims
    m = Memory.from_config(config)
    try:
        for i in range(n):
            m.add(f"fact number {i} about the build", user_id="dana", infer=False)
    finally:
        m.close()
    return config


def point_count(config: dict[str, Any]) -> int:
    with open_vector_store("qdrant", config["vector_store"]["config"], "mem0") as store:
        return store.count()


def test_credentials_are_redacted_unless_included(tmp_path: Path, clock: Any) -> None:
    config = offline_config(tmp_path / "a", hygiene={"clock": clock})
    fill_plain(config)
    redacted = export(config, str(tmp_path / "r.jsonl"))
    kept = export(config, str(tmp_path / "k.jsonl"), include_secrets=True)
    assert redacted.redactions >= 2  # the memory text and its ADD history row
    for path in (redacted.path, redacted.history_path):
        assert AWS_KEY not in Path(path).read_text(encoding="utf-8")
    assert "[redacted" in Path(redacted.path).read_text(encoding="utf-8")
    assert AWS_KEY in Path(kept.path).read_text(encoding="utf-8")
    assert AWS_KEY in Path(kept.history_path).read_text(encoding="utf-8")
    assert json.loads(Path(redacted.path).read_text().splitlines()[0])["secrets"] == "redacted"
    assert (redacted.points, redacted.ledger_rows) == (len(MEMORIES), 0)  # plain mem0: no ledger rows


def test_a_file_cut_short_is_refused_before_anything_is_written(tmp_path: Path, clock: Any) -> None:
    done = export(drop_in_store(tmp_path / "a", clock), str(tmp_path / "x.jsonl"))
    text = Path(done.path).read_text(encoding="utf-8").splitlines(keepends=True)
    Path(done.path).write_text("".join(text[:-1]), encoding="utf-8")  # the trailer lost
    target = offline_config(tmp_path / "b", hygiene={"clock": clock})
    with pytest.raises(PortableFileError, match="cut short: no trailer after its 3 record line"):
        import_(target, done.path)
    assert not (tmp_path / "b" / "qdrant").exists()
    assert not (tmp_path / "b" / "hygiene.db").exists()


def test_a_changed_line_or_a_newer_version_is_refused(tmp_path: Path, clock: Any) -> None:
    done = export(drop_in_store(tmp_path / "a", clock), str(tmp_path / "x.jsonl"))
    lines = Path(done.path).read_text(encoding="utf-8").splitlines(keepends=True)
    Path(done.path).write_text("".join([lines[0], lines[1].replace("fact", "fakt"), *lines[2:]]), encoding="utf-8")
    target = offline_config(tmp_path / "b", hygiene={"clock": clock})
    with pytest.raises(PortableFileError, match="does not match its trailer"):
        import_(target, done.path)
    header = json.loads(lines[0])
    header["version"] = 99
    Path(done.path).write_text("".join([json.dumps(header) + "\n", *lines[1:]]), encoding="utf-8")
    with pytest.raises(PortableFileError, match="format version 99, newer than"):
        import_(target, done.path)


def test_the_history_file_of_another_export_is_refused(tmp_path: Path, clock: Any) -> None:
    one = export(drop_in_store(tmp_path / "a", clock), str(tmp_path / "one.jsonl"))
    two = export(drop_in_store(tmp_path / "c", clock, n=2), str(tmp_path / "two.jsonl"))
    os.replace(two.history_path, history_path(one.path))
    with pytest.raises(PortableFileError, match="is not the history file exported with"):
        import_(offline_config(tmp_path / "b", hygiene={"clock": clock}), one.path)


def test_a_target_holding_other_memories_is_refused_and_a_dry_run_writes_nothing(tmp_path: Path, clock: Any) -> None:
    done = export(drop_in_store(tmp_path / "a", clock), str(tmp_path / "x.jsonl"), with_vectors=True)
    target = drop_in_store(tmp_path / "b", clock, n=1)
    with pytest.raises(ValueError, match="already holds memories that are not in"):
        import_(target, done.path)
    assert point_count(target) == 1

    empty = offline_config(tmp_path / "e", hygiene={"clock": clock})
    plan = import_(empty, done.path, dry_run=True)
    assert (plan.dry_run, plan.points, plan.inserted) == (True, 3, 0)
    assert not (tmp_path / "e" / "hygiene.db").exists()
    assert not (tmp_path / "e" / "qdrant" / "collection").exists()


def test_an_import_stopped_after_its_points_is_finished_by_the_next_run(tmp_path: Path, clock: Any) -> None:
    exported = export(drop_in_store(tmp_path / "a", clock), str(tmp_path / "x.jsonl"), with_vectors=True)
    target = offline_config(tmp_path / "b", hygiene={"clock": clock})

    def stop_after_points(phase: str, done: int, total: int | None) -> None:
        if phase == "writing the points" and done == total and done:
            progress.request_stop()

    with progress.reporting(stop_after_points), pytest.raises(Interrupted):
        import_(target, exported.path)
    assert point_count(target) == 3  # the points are in, the history and the ledger not yet

    again = import_(target, exported.path)
    assert (again.inserted, again.resumed, again.ledger_written, again.history_written) == (0, 3, 3, 3)
    assert point_count(target) == 3
    second = export(target, str(tmp_path / "y.jsonl"), with_vectors=True)
    assert Path(second.path).read_text().splitlines()[1:] == Path(exported.path).read_text().splitlines()[1:]


def test_vectors_of_another_length_are_embedded_by_the_targets_embedder(tmp_path: Path, clock: Any) -> None:
    done = export(drop_in_store(tmp_path / "a", clock), str(tmp_path / "x.jsonl"), with_vectors=True)
    target = offline_config(tmp_path / "b", hygiene={"clock": clock})
    target["embedder"]["config"] = {"embedding_dims": 64}
    target["vector_store"]["config"]["embedding_model_dims"] = 64
    result = import_(target, done.path)
    assert (result.inserted, result.embedded) == (3, 3)
    with open_vector_store("qdrant", target["vector_store"]["config"], "mem0") as store:
        vectors = [p["vector"] for page in store.pages(with_vectors=True) for p in page]
    assert {len(v) for v in vectors} == {64}
    without = export(target, str(tmp_path / "y.jsonl"))  # no vectors in the file: every text embedded again
    other = offline_config(tmp_path / "c", hygiene={"clock": clock})
    assert import_(other, without.path).embedded == 3


def test_a_row_superseded_by_a_memory_without_a_row_is_imported_invalidated(tmp_path: Path, clock: Any) -> None:
    import sqlite3

    config = drop_in_store(tmp_path / "a", clock)
    db = sqlite3.connect(tmp_path / "a" / "hygiene.db")  # a broken chain, as a tool without foreign keys leaves it
    victim = db.execute("SELECT memory_id FROM memories ORDER BY memory_id LIMIT 1").fetchone()[0]
    db.execute(
        "UPDATE memories SET superseded_by = 'nowhere', superseded_at = created_at WHERE memory_id = ?", (victim,)
    )
    db.commit()
    db.close()
    exported = export(config, str(tmp_path / "x.jsonl"))

    target = offline_config(tmp_path / "b", hygiene={"clock": clock})
    result = import_(target, exported.path)
    assert result.ledger_written == 3 and len(result.notes) == 1 and victim in result.notes[0]
    m = Memory.from_config(target)
    try:
        row = m.ledger.get(victim)
        assert row is not None and row.superseded_by is None
        assert row.invalid_reason == "superseded by nowhere, which the export holds no ledger row of"
        assert victim not in {r["id"] for r in m.get_all(filters={"user_id": "dana"})["results"]}
    finally:
        m.close()
