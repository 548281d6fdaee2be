"""mem0's own argument rules, applied by the drop-in exactly as mem0 applies them: ``top_k``/``threshold``
of ``search``/``get_all`` and ``expiration_date`` of ``add``/``update`` (same exception type and message,
checked before the drop-in does anything with the value). Taken from the installed mem0 where it has them
(2.0.12 and later), else the same rules restated."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from ..timeutil import parse_time, shift_time


def _validate_search_params_fallback(threshold: float | None = None, top_k: int | None = None) -> None:
    if threshold is not None:
        if not isinstance(threshold, (int, float)):
            raise ValueError("threshold must be a valid number")
        if threshold < 0 or threshold > 1:
            raise ValueError(f"Invalid threshold: {threshold}. Must be between 0 and 1 (inclusive).")
    if top_k is not None:
        if not isinstance(top_k, int) or isinstance(top_k, bool):
            raise ValueError("top_k must be a valid integer")
        if top_k < 0:
            raise ValueError(f"Invalid top_k: {top_k}. Must be a non-negative integer.")


def _normalize_expiration_date_fallback(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError as exc:
            raise ValueError("expiration_date must be a valid date in YYYY-MM-DD format.") from exc
    raise ValueError("expiration_date must be a date string in YYYY-MM-DD format.")


try:
    from mem0.memory.main import _normalize_expiration_date as normalize_expiration_date
    from mem0.memory.main import _validate_search_params as validate_search_params
except ImportError:  # pragma: no cover - every supported mem0 has both
    validate_search_params = _validate_search_params_fallback
    normalize_expiration_date = _normalize_expiration_date_fallback


def mem0_rejects(top_k: Any, threshold: Any = None) -> bool:
    """True when mem0 refuses these ``top_k``/``threshold`` values (the caller then lets mem0 itself raise,
    so the error, and which of several bad arguments it names first, is mem0's). ``None``, which mem0 lets
    through and then fails on, counts as refused too."""
    if not isinstance(top_k, int):
        return True
    try:
        validate_search_params(threshold=threshold, top_k=top_k)
    except ValueError:
        return True
    return False


def expiration_end(expiration_date: Any) -> datetime:
    """When a memory with mem0's ``expiration_date`` stops being shown: mem0 shows it through that UTC day and
    hides it from the next one. Raises mem0's ``ValueError`` for a value mem0 refuses, and ConfigError for a
    date outside the range the ledger keeps; a past date is fine (mem0 stores it, hidden as expired)."""
    day = str(normalize_expiration_date(expiration_date))
    return shift_time(parse_time(day, what="expiration_date"), timedelta(days=1), what="expiration_date")
