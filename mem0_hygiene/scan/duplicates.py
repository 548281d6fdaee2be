"""Exact duplicates: ``normalize_for_duplicates(text)`` is the key under which exact duplicates collide."""

from __future__ import annotations

_TRAILING_PUNCTUATION = ".,;:!?…。！？、 \t\n"


def normalize_for_duplicates(text: str) -> str:
    """The key exact duplicates share: case-folded, runs of whitespace as one space, no trailing
    sentence punctuation ("Prefers  pnpm." and "prefers pnpm" collide)."""
    return " ".join(text.casefold().split()).rstrip(_TRAILING_PUNCTUATION)
