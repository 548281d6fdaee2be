"""The audit reads the vector store's next page in a thread while it scans the one it has
(:func:`mem0_hygiene.auditing.reading.read_ahead`): pages come in order, an error reading comes where its page
would have, and a caller that stops early leaves no reader running and the pages closed."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from mem0_hygiene.auditing.reading import read_ahead


def test_pages_come_in_order_and_are_read_in_another_thread() -> None:
    readers: set[str] = set()

    def pages() -> Iterator[list[int]]:
        for n in range(5):
            readers.add(threading.current_thread().name)
            yield [n]

    assert list(read_ahead(pages())) == [[0], [1], [2], [3], [4]]
    assert readers == {"mem0-hygiene-read-ahead"}


def test_an_error_reading_comes_after_the_pages_read_before_it() -> None:
    def pages() -> Iterator[list[int]]:
        yield [1]
        raise ConnectionError("the server went away")

    got = []
    with pytest.raises(ConnectionError, match="went away"):
        for page in read_ahead(pages()):
            got.append(page)
    assert got == [[1]]


def test_a_caller_that_stops_early_leaves_the_pages_closed_and_no_reader() -> None:
    closed = threading.Event()

    def pages() -> Iterator[list[int]]:
        try:
            n = 0
            while True:
                yield [n]
                n += 1
        finally:
            closed.set()  # a server-side cursor's transaction would end here

    ahead = read_ahead(pages())
    assert next(ahead) == [0]
    ahead.close()
    assert closed.is_set()
    assert not any(t.name == "mem0-hygiene-read-ahead" for t in threading.enumerate())
