"""CONSOLIDATE_CANDIDATES: older values beside their replacement, retracted facts beside their retraction and
near-duplicates in one scope are reported, pointing at `consolidate --dry-run`; other scopes, exact repeats
and resolved pairs are not; after consolidate the finding is gone."""

from __future__ import annotations

from typing import Any

from mem0_hygiene import Memory, maintenance
from mem0_hygiene.auditing.checks.consolidation import frame
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.report import Severity

DANA = {"user_id": "dana"}


def _finding(config: dict[str, Any]) -> Any:
    return audit(config).get("CONSOLIDATE_CANDIDATES")


def test_frames_mask_values_and_negation_and_ignore_case_order_and_punctuation():
    assert frame("Dana uses Postgres 15") == frame("dana uses postgres 16.")
    assert frame("Deploys with Docker Compose") == frame("No longer deploys with Docker Compose")
    assert frame("Lives in Haifa") != frame("Lives in Cairo")


def test_stale_and_repeated_memories_are_reported_with_the_fix(make_deployment, persistent_dir):
    def plant(m: Memory) -> None:
        for text in (
            "Dana uses Postgres 15",
            "Dana uses Postgres 16",
            "Deploys with Docker Compose",
            "No longer deploys with Docker Compose",
            "Standup is at ten, daily",
            "Daily standup is at ten",
            "Lives in Haifa",
            "Lives in Haifa",
        ):
            m.add(text, **DANA, infer=False, source="chat")
        m.add("Dana uses Postgres 14", user_id="omer", infer=False, source="chat")  # another scope

    dep = make_deployment(persistent_dir, plant=plant)
    f = _finding(dep.config)
    assert f is not None and f.severity == Severity.WARNING
    assert (f.count, f.details["updates"], f.details["contradictions"], f.details["near_duplicates"]) == (3, 1, 1, 1)
    assert "consolidate --dry-run" in f.fix
    assert any(e.startswith("update: Dana uses Postgres 15 / Dana uses Postgres 16") for e in f.examples)
    maintenance.consolidate(dep.config)
    assert _finding(dep.config) is None  # resolved: the older, retracted and repeated ones are no longer live


def test_only_near_duplicates_are_information(make_deployment, persistent_dir):
    dep = make_deployment(
        persistent_dir,
        plant=lambda m: [m.add(t, **DANA, infer=False, source="chat") for t in ("Prefers pnpm", "pnpm, prefers")],
    )
    f = _finding(dep.config)
    assert f is not None and f.severity == Severity.INFO and f.count == 1
