"""Small text helpers every renderer shares: values made safe to show (:func:`printable`: credentials
redacted, control characters made visible), sizes, yes/no, plurals. Plain functions over plain values;
nothing here prints.

Credentials in anything shown are replaced by a marker naming their kind, ``[redacted openai_api_key]``
(:func:`redacted`: :func:`mem0_hygiene.scan.redact_secrets`, the redactor the write guard stores with), unless
the caller asks to see them, explicitly and for a block of code: ``with revealing_secrets(): ...`` (the CLI's
``--show-secrets``). The switch is a context variable, so a thread or task that did not ask keeps the default.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import datetime
from typing import Any


def redact_secrets(value: str) -> tuple[str, list[str]]:
    """:func:`mem0_hygiene.scan.redact_secrets`, imported when first needed (its patterns take a while to
    compile, and ``--help`` should not wait for them)."""
    from ..scan import redact_secrets as redact

    return redact(value)


# Line/paragraph separators and bidirectional controls: they reorder or break what the reader sees.
INVISIBLE = frozenset([0x2028, 0x2029, 0x200E, 0x200F, 0x061C, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
"""Code points that are not control characters but still move or hide text: line and paragraph separators,
the bidirectional marks, embeddings, overrides and isolates (U+202E, U+2066..U+2069, ...)."""

_REVEAL: ContextVar[bool] = ContextVar("mem0_hygiene_reveal_secrets", default=False)


@contextlib.contextmanager
def revealing_secrets(reveal: bool = True) -> Iterator[None]:
    """Within the block, outputs show credentials in full (``reveal=False``: redacted, the default).

    ``with revealing_secrets(): print(to_json(digest(config).to_dict()))``. Results render when they are
    shown, so display them inside the block; the audit and ``inspect()`` build their examples and frames
    when they run, so run them inside it.
    """
    token = _REVEAL.set(reveal)
    try:
        yield
    finally:
        _REVEAL.reset(token)


def secrets_revealed() -> bool:
    """Whether outputs show credentials in full here (inside :func:`revealing_secrets`)."""
    return _REVEAL.get()


def redacted(value: str) -> str:
    """``value`` with each credential replaced by ``[redacted KIND]``, unless revealing."""
    return value if _REVEAL.get() else redact_secrets(value)[0]


def redacted_data(data: Any) -> Any:
    """A JSON-ready value (dicts, lists, tuples, strings, numbers) with every string value redacted as
    :func:`redacted` does; keys are kept, other values returned as they are."""
    if _REVEAL.get():
        return data
    if isinstance(data, str):
        return redact_secrets(data)[0]
    if isinstance(data, dict):
        return {k: redacted_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redacted_data(v) for v in data]
    return data


def printable(value: object, limit: int | None = None) -> str:
    """``value`` as one line of plain text safe to show anywhere.

    Credentials are redacted (see :func:`redacted`); newlines and tabs become ``\\n`` and ``\\t``, other
    control characters (ANSI escapes, 8-bit CSI U+009B included) become ``\\xNN``, line separators and
    bidirectional controls (:data:`INVISIBLE`) ``\\uNNNN``; with ``limit``, the result is cut to that
    many characters, ending in "…".
    """
    text = redacted("" if value is None else str(value))
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif code in INVISIBLE:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    result = "".join(out)
    if limit is not None and len(result) > limit:
        result = result[: max(limit - 1, 0)] + "…"
    return result


def heading_time(value: object) -> str:
    """A UTC ISO time as a heading shows it: to the second, "2026-08-01 09:00:00 UTC" (other text as it is)."""
    text = "" if value is None else str(value)
    if len(text) >= 19 and text[10:11] == "T" and text[4:5] == "-":
        zone = text[19:].split("+")[-1] if "+" in text[19:] else ""
        suffix = " UTC" if zone in ("00:00", "") and (text.endswith("+00:00") or text.endswith("Z")) else ""
        if not suffix and "+" in text[19:]:
            suffix = " +" + zone
        return text[:10] + " " + text[11:19] + suffix
    return text


_FRACTION = re.compile(r"(?<=:\d\d)\.(\d+)")


def parsed_time(iso: str) -> datetime | None:
    """An ISO time as a datetime; None when it is not one."""
    if isinstance(iso, str):  # Python 3.10's fromisoformat reads no Z and only 3 or 6 digits of a fraction
        iso = iso[:-1] + "+00:00" if iso.endswith(("Z", "z")) else iso
        iso = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), iso, count=1)
    try:
        return datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return None


def run_text(started_at: str, finished_at: str, unit_space: str = " ") -> str:
    """``"2026-12-01 12:55:01 UTC, took 2.1 s"`` (to the second, as headings show times); the raw values when
    they are not ISO times. ``unit_space`` goes between the number and its unit (HTML keeps them together)."""
    start, end = parsed_time(started_at), parsed_time(finished_at)
    if start is None:
        return f"{started_at or '?'} -> {finished_at or '?'}"
    zone = " UTC" if start.utcoffset() is not None and not start.utcoffset() else start.strftime(" %z").rstrip()
    text = start.strftime("%Y-%m-%d %H:%M:%S") + zone
    if end is not None:
        try:
            took = max((end - start).total_seconds(), 0.0)
            text += f", took {took:.1f}{unit_space}s" if took >= 1 else f", took {took * 1000:.0f}{unit_space}ms"
        except TypeError:  # one aware, one naive
            pass
    return text


def plural(n: int, one: str, many: str) -> str:
    """``"1 memory"``, ``"2 memories"``: the count with the right form of the noun."""
    return f"{n} {one if n == 1 else many}"


def human_size(size: object) -> str:
    """Bytes as "512 B", "1.5 KiB", "3.2 MiB"...; "-" when unknown."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return "-"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover - the loop always returns


def yes_no(value: object) -> str:
    """True -> "yes", False -> "no", anything else (None, missing) -> "-"."""
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return "-"
