"""A migration loads its local Qdrant source once (a local folder is read whole at each opening: the plan, the copy
and the verification used to open it three times), and leaves it closed and unchanged afterwards."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from qdrant_client.local.qdrant_local import QdrantLocal

from mem0_hygiene import offline_config
from mem0_hygiene.maintenance import migrate
from mem0_hygiene.stores.vector import open_vector_store

from .test_portable import drop_in_store


def test_a_migration_opens_its_local_qdrant_source_once(tmp_path: Path, clock: Any, monkeypatch: Any) -> None:
    source = drop_in_store(tmp_path / "a", clock, n=5)
    target = offline_config(tmp_path / "b", hygiene={"clock": clock})
    source_folder = os.path.abspath(source["vector_store"]["config"]["path"])
    opened: list[str] = []
    load = QdrantLocal.__init__

    def counting(self: Any, location: str, *args: Any, **kwargs: Any) -> None:
        opened.append(os.path.abspath(location))
        load(self, location, *args, **kwargs)

    monkeypatch.setattr(QdrantLocal, "__init__", counting)
    result = migrate(source, target)
    monkeypatch.undo()

    assert result.points == 5 and result.queries > 0  # verified by count, checksum and sampled queries
    assert opened.count(source_folder) == 1
    with open_vector_store("qdrant", source["vector_store"]["config"], "mem0") as store:  # closed: its lock is free
        assert store.count() == 5
