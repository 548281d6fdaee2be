"""The hidden temporary names a store move works under, and removing the ones a crash left behind.

Every temporary file or folder made while moving a store sits beside the path it is for and is named after
it, ``.NAME.relocating-*``:

- ``.NAME.relocating-XXXXXXXX`` (random): a copy being built for ``NAME`` (:func:`staging_prefix`); it
  becomes ``NAME`` by one rename once verified, so a leftover is always incomplete and safe to delete;
- ``.NAME.relocating-aside``: the moved-from folder while ``NAME`` is being switched to a link
  (:func:`aside_path`);
- ``.NAME.relocating-link``: the link made before it replaces the file ``NAME`` (:func:`link_tmp_path`).

:func:`remove_stale_copies` deletes leftover copies of the first kind; the switch's own names are finished
or undone by :func:`mem0_hygiene.stores.moves.finish_swap`, never deleted blindly.
"""

from __future__ import annotations

import contextlib
import os
import shutil

MARK = ".relocating-"
ASIDE = "aside"
LINK = "link"


def staging_prefix(path: str) -> str:
    """The name prefix (for ``tempfile.mkdtemp``/``mkstemp``) of a copy being built for ``path``."""
    return f".{os.path.basename(path)}{MARK}"


def aside_path(path: str) -> str:
    """Where the folder at ``path`` waits while ``path`` is switched to a link."""
    return os.path.join(os.path.dirname(path), f"{staging_prefix(path)}{ASIDE}")


def link_tmp_path(path: str) -> str:
    """Where the link that replaces the file at ``path`` is made first."""
    return os.path.join(os.path.dirname(path), f"{staging_prefix(path)}{LINK}")


def remove_path(path: str) -> None:
    """Remove a file, a link (not what it points to) or a folder tree; nothing when it is not there."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def stale_copies(path: str) -> list[str]:
    """The leftover half-built copies for ``path`` (``.NAME.relocating-XXXXXXXX`` beside it, SQLite
    sidecars of such copies included), sorted; the switch's aside folder and link are not among them."""
    parent = os.path.dirname(path) or "."
    prefix = staging_prefix(path)
    try:
        names = os.listdir(parent)
    except FileNotFoundError:
        return []
    out = []
    for name in names:
        rest = name[len(prefix) :] if name.startswith(prefix) else None
        if rest and rest not in (ASIDE, LINK):
            out.append(os.path.join(parent, name))
    return sorted(out)


def remove_stale_copies(path: str) -> list[str]:
    """Delete the half-built copies an interrupted move left for ``path``; returns what was removed.

    Call it only while holding what keeps another mover of the same store out (the source's lock), so a copy
    that another process is building right now is not taken for a leftover.
    """
    removed = stale_copies(path)
    for leftover in removed:
        remove_path(leftover)
    return removed
