"""The stores layer: reading, writing, checking and copying the files a mem0 deployment keeps.

- :mod:`.sqlite`: the one SQLite connect (busy timeout, ``mode=ro``/``mode=rw``), transactions,
  integrity checks, row counts, sidecar names and verified copies of a live database;
- :mod:`.ledger`: the sidecar ledger (schema, migrations, queries);
- :mod:`.qdrant`: a local Qdrant folder (its lock, point counts, verified copies);
- :mod:`.vectors`: the one pager over a vector store's points;
- :mod:`.backup_set` and :mod:`.backup_record`: the backup set format and the record of backups;
- :mod:`.locations`, :mod:`.mounts` and :mod:`.guard`: where the stores live, on which filesystem,
  and the start-up check that none is on a RAM disk by accident.

Nothing here imports from the layers above it (``actions``, ``auditing``, ``memory``, ``cli``,
``render``): only from :mod:`mem0_hygiene.errors`, :mod:`mem0_hygiene.timeutil` and
:mod:`mem0_hygiene.config` (for path defaults), besides mem0 and qdrant-client themselves.
"""
