"""Erasure reaches the backup sets of every vector store: a set made through the provider seam (pgvector's rows,
Chroma's folder, FAISS's index and docstore; local Qdrant's folder as the baseline) holds the person before, and
after ``forget --user`` (or ``forget --scrub``) no file of the set holds a byte of the text, the set is resealed (its
checks pass, ``restore --dry-run`` accepts it), and restoring it serves the other user's memories and not the
erased ones. A Chroma or FAISS folder a migration left (a registered copy) is erased the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.forget import forget
from mem0_hygiene.actions.forget_scope import forget_scope
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.maintenance import migrate
from mem0_hygiene.stores.backup_set import check_set, read_manifest

from .stores import missing, store_config

SECRET = "Dana's passport number is X1234567"
TEA = "Dana likes green tea with oat milk"
BOB = "Bob works on the billing service"


def files_holding(folder: Path, text: str) -> list[str]:
    """Every file under ``folder`` whose raw bytes hold ``text`` (UTF-8)."""
    needle = text.encode("utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def planted(config: dict[str, Any], dest: Path) -> tuple[dict[str, str], Path]:
    """Dana's two memories and Bob's one, then a backup set of them; returns the ids by text and the set."""
    m = Memory.from_config(config)
    try:
        ids = {
            text: m.add(text, user_id=who, infer=False)["results"][0]["id"]
            for text, who in ((SECRET, "dana"), (TEA, "dana"), (BOB, "bob"))
        }
    finally:
        m.close()
    made = Path(backup(config, dest).path)
    vector_files = [f for f in files_holding(made, SECRET) if not f.endswith(".db")]
    assert vector_files, files_holding(made, SECRET)  # the set's vector store really holds the text before
    return ids, made


def unclean(result: Any) -> Any:
    """What a forget result says is not clean: the files still holding a text, the copies, and its notes."""
    d = result.to_dict() if result is not None else {}
    return (
        [f for f in d.get("files", []) if not f.get("clean", True)],
        d.get("copies"),
        d.get("unverified"),
        d.get("notes"),
    )


def served(config: dict[str, Any], user: str) -> list[str]:
    m = Memory.from_config(config)
    try:
        return sorted(r["memory"] for r in m.get_all(filters={"user_id": user})["results"])
    finally:
        m.close()


def assert_erased_and_restorable(config: dict[str, Any], made: Path, gone: list[str], erased_copy: Any) -> None:
    assert erased_copy.scrubbed and erased_copy.resealed and not erased_copy.holds_text, erased_copy
    for text in gone:
        assert files_holding(made, text) == [], text
    assert files_holding(made, BOB)  # the other user's memory is still in the set
    assert check_set(made) == []
    assert read_manifest(made)["changes"][-1]["what"] == "erasure"
    assert restore(config, made, dry_run=True).dry_run
    restore(config, made)
    assert served(config, "bob") == [BOB]
    assert served(config, "dana") == []


def test_forget_user_erases_every_stores_backup_set_which_still_restores(provider_config: Any, tmp_path: Path) -> None:
    config = provider_config()
    _ids, made = planted(config, tmp_path / "backups")

    result = forget_scope(config, user_id="dana")

    assert result.forget is not None
    assert result.verified, unclean(result.forget)
    [erased] = [c for c in result.forget.copies if c.path == str(made)]
    assert erased.points_deleted >= 2
    assert_erased_and_restorable(config, made, [SECRET, TEA], erased)


def test_forget_scrub_erases_one_memory_from_every_stores_backup_set(provider_config: Any, tmp_path: Path) -> None:
    config = provider_config()
    ids, made = planted(config, tmp_path / "backups")

    result = forget(config, [ids[SECRET]], scrub=True)

    assert result.verified, unclean(result)
    [erased] = [c for c in result.copies if c.path == str(made)]
    assert erased.points_deleted == 1
    assert files_holding(made, TEA)  # only the forgotten memory left the set
    assert erased.scrubbed and erased.resealed and not erased.holds_text, erased
    assert files_holding(made, SECRET) == []
    assert check_set(made) == []
    restore(config, made)
    assert served(config, "dana") == [TEA]
    assert served(config, "bob") == [BOB]


def test_a_second_erasure_of_the_same_set_changes_nothing_more(provider_config: Any, tmp_path: Path) -> None:
    config = provider_config()
    _ids, made = planted(config, tmp_path / "backups")
    forget_scope(config, user_id="dana")
    before = read_manifest(made)

    again = forget_scope(config, user_id="dana")

    assert again.verified and again.forget is not None, unclean(again.forget)
    after = read_manifest(made)
    assert after["stores"]["vector_store"] == before["stores"]["vector_store"]
    assert check_set(made) == []


@pytest.fixture(autouse=True)
def _quiet_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_TELEMETRY", "False")


@pytest.mark.parametrize("old", ["chroma", "faiss"])
def test_forget_scrub_erases_the_text_from_an_old_chroma_or_faiss_folder_a_migration_left(
    old: str, tmp_path: Path, clock: Any
) -> None:
    why = missing(old)
    if why:
        pytest.skip(why)
    source = store_config(old, tmp_path / "a", collection="mem0", hygiene={"clock": clock})
    m = Memory.from_config(source)
    try:
        secret = m.add(SECRET, user_id="dana", infer=False)["results"][0]["id"]
        m.add(BOB, user_id="bob", infer=False)
    finally:
        m.close()
    target = offline_config(tmp_path / "b", collection="mem0", hygiene={"clock": clock})
    migrate(source, target)
    folder = tmp_path / "a" / old
    assert files_holding(folder, SECRET)  # the old folder, a registered copy, holds the text

    result = forget(target, [secret], scrub=True)

    assert result.verified, unclean(result)
    [erased] = [c for c in result.copies if c.path == str(folder)]
    assert erased.kind == "migration_source" and erased.scrubbed and erased.points_deleted == 1, erased
    assert files_holding(tmp_path / "a", SECRET) == []
    assert files_holding(folder, BOB)
    assert served(source, "bob") == [BOB] and served(source, "dana") == []  # the old store still opens


def test_forget_user_erases_the_store_a_restore_moved_aside_on_every_store(
    provider_config: Any, tmp_path: Path
) -> None:
    config = provider_config()
    _ids, made = planted(config, tmp_path / "backups")
    restored = restore(config, made)
    asides = [Path(s.replaced_to) for s in restored.stores if s.replaced_to]
    assert asides and any(files_holding(a, SECRET) if a.is_dir() else SECRET.encode() in a.read_bytes() for a in asides)

    result = forget_scope(config, user_id="dana")

    assert result.forget is not None
    assert result.verified, unclean(result.forget)
    assert {c.kind for c in result.forget.copies} >= {"backup_set", "replaced_aside"}
    for text in (SECRET, TEA):
        assert files_holding(tmp_path, text) == [], text
    assert served(config, "bob") == [BOB]
