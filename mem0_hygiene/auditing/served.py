"""How often the memories a finding names were served since they were written, from the read log
(``hygiene.read_log: true``): "this injected order was served 14 times" says which answers it could have
influenced (``mem0-hygiene reads --memory ID`` lists them).

:func:`with_served` adds it to the findings about memories (:data:`SERVED_CODES`): each example that starts with a
memory id gets ``(served N time(s) since written)``, and ``details["served_since_written"]`` maps each to N.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..errors import LedgerError
from ..report import Finding
from ..stores.ledger import open_ledger
from ..stores.ledger.reads import served_counts

SERVED_CODES = (
    "TOOL_SOURCED",
    "SECRET_IN_MEMORY",
    "INSTRUCTION_MEMORY",
    "CHAIN_BROKEN",
    "TOMBSTONED_PRESENT",
    "MEMORIES_RESURRECTED",
)
"""The findings about single memories whose examples start with the memory's id: tool-sourced, credentials,
standing orders, superseded memories whose replacement is gone, deleted memories back in the store."""


def _example_id(example: str) -> str:
    return example.split(maxsplit=1)[0].rstrip(":") if example else ""


def with_served(findings: Sequence[Finding], ledger_path: str) -> list[Finding]:
    """The findings, those about memories saying how often each example was served since it was written (the
    ledger opened read-only; unchanged when it cannot be read or has no read log)."""
    about = [f for f in findings if f.code in SERVED_CODES and f.examples]
    if not about:
        return list(findings)
    try:
        ledger = open_ledger(ledger_path, readonly=True)
    except LedgerError:
        return list(findings)
    try:
        if not ledger.has_table("reads"):
            return list(findings)
        ids = sorted({_example_id(e) for f in about for e in f.examples} - {""})
        rows = ledger.get_many(ids)
        counts = served_counts(ledger, {mid: row.created_at for mid, row in rows.items() if row.created_at})
    finally:
        ledger.close()
    out = []
    marked = {id(f) for f in about}
    for f in findings:
        if id(f) not in marked:
            out.append(f)
            continue
        served = {_example_id(e): counts.get(_example_id(e), 0) for e in f.examples if _example_id(e) in rows}
        examples = tuple(
            f"{e} (served {served[_example_id(e)]} time(s) since written)" if _example_id(e) in served else e
            for e in f.examples
        )
        out.append(replace(f, examples=examples, details={**f.details, "served_since_written": served}))
    return out


__all__ = ["SERVED_CODES", "with_served"]
