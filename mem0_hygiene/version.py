"""The package's version, in a module of its own so that any layer can read it without importing the
package's ``__init__`` (which names every public object). The ``version`` in ``pyproject.toml`` says the same."""

from __future__ import annotations

__version__ = "0.1.0"
