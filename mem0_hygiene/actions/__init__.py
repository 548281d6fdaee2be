"""Maintenance from outside the app (or in it, given the app's Memory): each action takes a deployment
(a config dict, the app's live drop-in ``Memory`` or a resolved :class:`~mem0_hygiene.target.Target`) and
returns a result object that renders itself (``__rich__``, ``_repr_html_``, ``to_dict``), so the CLI and a
notebook show the same thing.

One module per action: ``prune``, ``review`` (queue, confirm, invalidate, supersede), ``digest`` (digest and a
memory's story), ``backup``, ``restore``, ``forget``, ``relocate``, ``schedule``, ``where`` (``compaction`` is
now :mod:`mem0_hygiene.memory.compaction`);
``opening`` opens the drop-in from a config; ``results`` holds the review/digest/story results.

May import: stores/, memory/, display/ (text and tables for the results), render/ (where's location lines),
target, config, errors, timeutil. Never cli/.
Deletions go through mem0's API (``Memory.delete`` and friends), never around it.
"""
