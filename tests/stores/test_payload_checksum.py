"""The stores' checksum over ids and payloads is the same sorted in memory or on disk, in any page order, and
keeps memory flat past its spill point (a million memories' lines would otherwise be held at once)."""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from mem0_hygiene.stores.vector import payload_checksum


def points(n: int, step: int = 7919) -> Iterator[dict[str, object]]:
    """``n`` points in a scrambled order (``step`` coprime to ``n``), made one at a time: nothing held for all."""
    assert math.gcd(step, n) == 1
    for k in range(n):
        i = k * step % n
        yield {"id": f"{i:08d}-mem", "payload": {"data": f"fact {i} über Köln ✓", "user_id": f"u{i % 7}", "n": i}}


def test_sorting_on_disk_gives_the_same_checksum_as_in_memory_whatever_the_page_order() -> None:
    in_memory = payload_checksum(points(5000))
    assert payload_checksum(points(5000, step=7907), spill_at=700) == in_memory
    assert payload_checksum(points(5000), spill_at=1) == in_memory
    assert in_memory[0] == 5000
    assert payload_checksum([], spill_at=1) == payload_checksum([])


def test_a_large_collection_is_checksummed_in_flat_memory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SQLITE_TMPDIR", str(tmp_path))  # SQLite's temporary files, where the test can see none stays

    def peak(n: int, spill_at: int) -> tuple[int, tuple[int, str]]:
        tracemalloc.start()
        try:
            result = payload_checksum(points(n), spill_at=spill_at)
            return tracemalloc.get_traced_memory()[1], result
        finally:
            tracemalloc.stop()

    small, large = 15_000, 45_000
    (held_small, _), (held_large, whole) = peak(small, 10**9), peak(large, 10**9)
    (flat_small, _), (flat_large, same) = peak(small, 2_000), peak(large, 2_000)
    assert same == whole
    assert held_large > 2.5 * held_small  # in memory, the peak grows with the points
    assert flat_large < 1.3 * flat_small  # spilled, it does not
    assert list(tmp_path.iterdir()) == []  # the spill file is removed
