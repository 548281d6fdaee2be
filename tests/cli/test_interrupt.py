"""Ctrl-C in a long command: the first SIGINT stops it at the next safe point, it says how far it got and that
running it again finishes the rest (exit 130), nothing is lost, and the rerun finishes the job."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mem0_hygiene import progress
from mem0_hygiene.cli import EXIT_INTERRUPTED, cli

from .test_plain_store import plain_store, store_args


def deletes_in_history(folder: Path) -> int:
    with sqlite3.connect(folder / "history.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM history WHERE event = 'DELETE'").fetchone()[0]


def ctrl_c_when(phase: str, at: int) -> Any:
    """A progress listener that sends this process a real SIGINT once ``phase`` has ``at`` items done."""
    sent = []

    def listen(name: str, done: int, total: int | None) -> None:
        if name == phase and done == at and not sent:
            sent.append(done)
            os.kill(os.getpid(), signal.SIGINT)

    return listen


def test_ctrl_c_during_prune_stops_at_a_safe_point_says_how_far_and_a_rerun_finishes(tmp_path):
    plain_store(tmp_path, expired=9, live=2)
    with progress.reporting(ctrl_c_when("deleting memories through mem0", 3)):
        result = CliRunner().invoke(cli, ["prune", *store_args(tmp_path, "memories")], catch_exceptions=False)
    assert result.exit_code == EXIT_INTERRUPTED, result.output
    assert "stopping at the next safe point" in result.stderr
    assert (
        "Interrupted: stopped at a safe point while deleting memories through mem0 (3 of 9 done); what was "
        "done is kept, and running the same command again finishes the rest"
    ) in result.stderr
    assert "Aborted!" not in result.output
    assert deletes_in_history(tmp_path) == 3  # exactly what it said: each delete whole, through mem0

    again = CliRunner().invoke(cli, ["prune", "--json", *store_args(tmp_path, "memories")], catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert deletes_in_history(tmp_path) == 9
    report = json.loads(CliRunner().invoke(cli, ["audit", "--json", *store_args(tmp_path, "memories")]).stdout)
    assert "EXPIRED_NOT_PRUNED" not in {f["code"] for f in report["findings"]}
    assert report["stats"]["memories_in_vector_store"] == 2  # the live ones kept


def test_a_ctrl_c_no_operation_took_up_does_not_stop_the_next_command(tmp_path):
    plain_store(tmp_path, expired=2, live=1)
    progress.request_stop()  # left over, as if the signal came after the last safe point of another command
    result = CliRunner().invoke(cli, ["prune", *store_args(tmp_path, "memories")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert deletes_in_history(tmp_path) == 2


def test_the_sigint_handler_is_put_back_after_the_command(tmp_path):
    plain_store(tmp_path, expired=1, live=1)
    before = signal.getsignal(signal.SIGINT)
    CliRunner().invoke(cli, ["prune", "--dry-run", *store_args(tmp_path, "memories")], catch_exceptions=False)
    assert signal.getsignal(signal.SIGINT) is before
