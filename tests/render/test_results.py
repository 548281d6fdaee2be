"""Backup, restore, forget, relocate and where results render themselves: the terminal (rich) and a notebook
(HTML) show the same lines, and text from the stores is made printable in both."""

from __future__ import annotations

import html
import io
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.forget import forget
from mem0_hygiene.actions.relocate import relocate
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.actions.where import where


def rendered(result: Any) -> str:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(result)
    return out.getvalue()


def plant(m: Any) -> list[str]:
    ids = [
        m.add(text, user_id="dana", infer=False, source="chat")["results"][0]["id"]
        for text in ("Prefers pnpm", "Standup is at 9:30")
    ]
    return ids


def test_each_maintenance_result_shows_the_same_lines_in_the_terminal_and_in_html(tmp_path: Path, make_deployment: Any):
    dep = make_deployment(tmp_path / "store", plant=plant)
    made = backup(dep.config, tmp_path / "backups")
    results = {
        "backup": (made, f"backed up into {made.path}"),
        "restore": (restore(dep.config, made.path, dry_run=True), "dry run: would restore the backup taken"),
        "forget": (
            forget(dep.config, [dep.planted[0]], dry_run=True),
            f"would delete (through mem0's API): {dep.planted[0]}",
        ),
        "relocate": (relocate(dep.config, tmp_path / "elsewhere", dry_run=True), "vector_store: would copy"),
        "where": (where(dep.config), "mem0 store locations"),
    }
    for name, (result, line) in results.items():
        text = rendered(result)
        assert line in text, (name, text)
        shown = html.unescape(re.sub(r"<[^>]+>", "", result._repr_html_()))
        assert line in shown, (name, shown)


def test_control_characters_in_a_note_reach_neither_the_terminal_nor_html(tmp_path: Path, make_deployment: Any):
    dep = make_deployment(tmp_path / "store", plant=plant)
    made = backup(dep.config, tmp_path / "backups")
    from dataclasses import replace

    hostile = replace(made, notes=("bad\x1b[2Jname\u202eevil",))
    text, page = rendered(hostile), hostile._repr_html_()
    for out in (text, page):
        assert "\x1b" not in out and "\u202e" not in out
        assert "\\x1b[2Jname\\u202eevil" in out
