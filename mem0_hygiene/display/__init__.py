"""How values are shown, for every layer that shows something: safe text and small tables.

- :mod:`.text`: values made safe to show (:func:`~.text.printable`: credentials redacted, control characters made
  visible), sizes, yes/no, plurals, times as headings; ``revealing_secrets()`` (the CLI's ``--show-secrets``).
- :mod:`.tables`: the result objects' tables and summary lines (``TableView``, ``LinesView``), one set of rows
  rendered as rich text and as HTML.

It sits below ``memory/``, ``actions/``, ``auditing/`` and ``render/``, so a result renders itself without
importing the audit's renderers. Imports nothing of the package but :mod:`mem0_hygiene.scan` (the redactor,
when first needed); nothing here prints.
"""
