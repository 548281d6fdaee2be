"""``python -m mem0_hygiene``: the same CLI as the ``mem0-hygiene`` command."""

from .cli import main

main()
