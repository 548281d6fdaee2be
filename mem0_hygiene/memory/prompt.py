"""Memories as prompt lines that carry their age, so the model can say "as of May"."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def _date(value: Any) -> str | None:
    return str(value)[:10] if value else None


def format_for_prompt(results: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> str:
    """One line per memory: ``- Uses pnpm (confirmed 2026-05-02)``.

    Takes a ``search``/``get_all`` result (``{"results": [...]}``) or its list of items. Items without
    hygiene facts (plain mem0) fall back to their ``updated_at``/``created_at`` date.
    """
    items = results.get("results", []) if isinstance(results, Mapping) else results
    lines = []
    for item in items:
        text = str(item.get("memory", "")).strip()
        facts = item.get("hygiene") or {}
        confirmed = _date(facts.get("confirmed_at"))
        if confirmed:
            note = f"confirmed {confirmed}"
        else:
            stamp = _date(item.get("updated_at") or item.get("created_at"))
            note = f"recorded {stamp}" if stamp else "date unknown"
        expires = _date(facts.get("expires_at"))
        if expires:
            note += f", until {expires}"
        lines.append(f"- {text} ({note})")
    return "\n".join(lines)
