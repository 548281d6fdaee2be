"""Small text helpers every renderer shares: values made safe to show (:func:`printable`), sizes, yes/no,
plurals. Plain functions over plain values; nothing here prints."""

from __future__ import annotations

# Line/paragraph separators and bidirectional controls: they reorder or break what the reader sees.
_INVISIBLE = frozenset([0x2028, 0x2029, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])


def printable(value: object, limit: int | None = None) -> str:
    """``value`` as one line of plain text safe to show anywhere.

    Newlines and tabs become ``\\n`` and ``\\t``, other control characters (ANSI escapes included)
    become ``\\xNN``, line separators and bidirectional overrides ``\\uNNNN``; with ``limit``, the
    result is cut to that many characters, ending in "…".
    """
    text = "" if value is None else str(value)
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif code in _INVISIBLE:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    result = "".join(out)
    if limit is not None and len(result) > limit:
        result = result[: max(limit - 1, 0)] + "…"
    return result


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
