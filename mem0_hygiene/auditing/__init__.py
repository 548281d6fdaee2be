"""The audit and the notebook inspection: a resolved Target -> a read-only scratch database -> checks -> Report.

- ``runner``: :func:`audit` (``from mem0_hygiene import audit``).
- ``inspection``: :func:`inspect`, the same reads as DataFrames and plots.
- ``scratch``: the scratch SQLite database that attaches history.db and the ledger read-only and receives the
  vector store's points in pages; ``reading`` streams the points into it.
- ``checks/``: one module per family of checks, registered with ``@check(code, area, needs=...)``; importing
  the package registers all of them.
- ``scan/``: the earlier import path of the pure text scanners, now :mod:`mem0_hygiene.scan`.

May import: scan/, stores/, report, render/ (inspection's tables and plots), target, config, errors, timeutil. Never
actions/ (except the backup record reader), memory/ or cli/. Nothing here writes to a store.
"""
