"""How the audit names each host's history.db: LABEL=PATH as given, else the file's folder; each file once."""

from __future__ import annotations

from pathlib import Path

import pytest

from mem0_hygiene.errors import ConfigError
from mem0_hygiene.stores.history import HistoryFile, history_files, split_label
from mem0_hygiene.target import resolve


def test_labels_come_from_the_entry_or_the_folder_and_repeated_files_count_once(tmp_path: Path) -> None:
    own = str(tmp_path / "host0" / "history.db")
    files = history_files(
        own,
        [f"paris={tmp_path}/host1/history.db", own, f"{tmp_path}/mnt/host0/history.db", f"{tmp_path}/host1/history.db"],
    )
    assert files == [
        HistoryFile("host0", own),
        HistoryFile("paris", f"{tmp_path}/host1/history.db"),
        HistoryFile("mnt/host0", f"{tmp_path}/mnt/host0/history.db"),
    ]  # host0 was taken
    assert history_files(own, [f"me={own}"]) == [HistoryFile("me", own)]


def test_a_path_with_an_equals_sign_is_a_path_unless_what_precedes_it_is_a_label(tmp_path: Path) -> None:
    odd = tmp_path / "a=b.db"
    odd.write_text("")
    assert split_label(str(odd)) == (None, str(odd))
    assert split_label("/data/x=y/history.db") == (None, "/data/x=y/history.db")
    assert split_label("edge-1=/data/history.db") == ("edge-1", "/data/history.db")


def test_the_config_lists_the_other_hosts_and_refuses_anything_but_paths(tmp_path: Path) -> None:
    cfg = {"history_db_path": str(tmp_path / "h0.db"), "hygiene": {"history_dbs": [f"b={tmp_path}/b/h.db"]}}
    assert [f.label for f in resolve(cfg).history_files] == [tmp_path.name, "b"]
    with pytest.raises(ConfigError, match="hygiene.history_dbs must be a list of history.db paths"):
        resolve({"hygiene": {"history_dbs": [3]}})
