"""The drop-in ``Memory`` (:mod:`.core`) and what it is made of.

- :mod:`.core`: ``Memory`` itself: constructor, the mem0 methods
  it overrides, the lifecycle verbs;
- :mod:`.asynchronous`: ``AsyncMemory``, mem0's async API over one ``Memory`` (calls serialized for local Qdrant);
- mixins of ``Memory``: :mod:`.buffer` (buffered ledger writes), :mod:`.reads` (read filtering and
  paging), :mod:`.write_decision` (``hygiene.write_decision`` at ``add``), :mod:`.pruning` (``prune``,
  ``hygiene.auto_prune``, and the prune results);
- plain rules and codecs: :mod:`.birth` (a memory's birth facts in its payload), :mod:`.scope`,
  :mod:`.provenance`, :mod:`.decision` (with its text features :mod:`.decision_features` and their lexicon
  :mod:`.decision_lexicon`, the fitted model :mod:`.decision_model` and its numbers :mod:`.decision_weights`, and
  the LLM :mod:`.judge`), :mod:`.ranking`,
  :mod:`.timetravel`, :mod:`.prompt`.

Imports: this package uses ``stores/``, ``config``, ``errors``, ``timeutil`` and ``display/`` (the prune
results' tables) (and mem0); :mod:`.compaction` (ledger compaction, run by ``hygiene.auto_prune`` and by the
prune action) lives here. It never imports ``actions/``, ``auditing/``, ``render/``, ``target`` or ``cli/``:
the package exports these classes with ``backup()`` and ``forget()`` added, from
:mod:`mem0_hygiene.actions.drop_in` above them.
"""
