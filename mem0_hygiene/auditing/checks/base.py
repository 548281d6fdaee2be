"""What every check gets (the context) and how checks declare what they need (the registry)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ...display.text import plural, redacted
from ...report import Finding, Severity, Skipped
from ...stores.locations import StoreLocation
from ...stores.states import live_sql
from ..scratch import ScratchDB

CheckResult = Iterable[Finding]


@dataclass
class Context:
    """Everything a check may read.

    Fields:
        db: the scratch database (``points``, ``hits``, ``hist``; ``h`` = history.db, ``l`` = a SQLite ledger);
            ``db.ledger`` runs the ledger's own queries, on SQLite or on PostgreSQL
            (:mod:`mem0_hygiene.auditing.ledger_sql`).
        now: the audit's time (UTC).
        locations: every store location of the deployment.
        examples: how many example ids/texts a finding shows.
        review_older_than: confirmations older than this are due for review.
        retain_superseded: superseded/invalidated rows older than this are prunable.
        target: how the deployment was named (for fix commands).
        config_hint: the ``--config ...`` part of fix commands.
    """

    db: ScratchDB
    now: datetime
    locations: list[StoreLocation]
    examples: int = 5
    review_older_than: timedelta = timedelta(days=90)
    retain_superseded: timedelta = timedelta(days=180)
    target: str = ""
    config_hint: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def now_iso(self) -> str:
        return self.now.isoformat(timespec="microseconds")

    def cmd(self, command: str) -> str:
        """A mem0-hygiene command line with this deployment's config options."""
        return f"mem0-hygiene {command}{self.config_hint}"


SEVERITIES = ("info", "warning", "error", "info/warning", "info/error")
"""What a check's ``severity`` may say: the one severity of its findings, or the two it chooses between."""


@dataclass(frozen=True)
class Check:
    """A registered check: its code, area, what sources it needs, the function, and its documentation (the
    finding codes page of the docs is generated from these fields: ``severity``, what a finding ``means``, and
    the ``fix`` in words; each finding's own fix line names the real ids and options)."""

    code: str
    area: str
    needs: tuple[str, ...]
    func: Callable[[Context], CheckResult]
    severity: str = ""
    means: str = ""
    fix: str = ""


REGISTRY: list[Check] = []


def check(
    code: str, area: str, needs: tuple[str, ...] = (), *, severity: str, means: str, fix: str
) -> Callable[[Callable[[Context], CheckResult]], Callable[[Context], CheckResult]]:
    """Register a check. ``needs`` names sources ("points", "history", "ledger", "messages"; "ledger|points":
    either will do); when one is unavailable the audit reports the check as skipped with the source's reason
    instead of running it. ``severity`` (one of :data:`SEVERITIES`), ``means`` and ``fix`` document it."""
    if severity not in SEVERITIES or not means.strip() or not fix.strip():
        raise ValueError(f"check {code}: give a severity ({', '.join(SEVERITIES)}), what it means and its fix")

    def register(func: Callable[[Context], CheckResult]) -> Callable[[Context], CheckResult]:
        REGISTRY.append(Check(code, area, needs, func, severity, means, fix))
        return func

    return register


def finding(
    code: str,
    severity: Severity,
    area: str,
    title: str,
    *,
    count: int = 0,
    examples: Iterable[Any] = (),
    why: str = "",
    fix: str = "",
    **details: Any,
) -> Finding:
    """A Finding; credentials in its examples are redacted (texts should come through :func:`clip`, which
    redacts before it shortens, so no piece of a secret survives the cut)."""
    return Finding(
        code=code,
        severity=severity,
        area=area,
        title=title,
        count=count,
        examples=tuple(redacted(str(e)) for e in examples),
        why=why,
        fix=fix,
        details=details,
    )


FIX_IDS = 20
"""How many memory ids a fix command names at most (a rerun of the audit lists the rest)."""


def ids_cmd(ctx: Context, verb: str, ids: Iterable[str], total: int, options: str = "") -> str:
    """A fix command naming the real ids: ``mem0-hygiene forget ID1 ID2 --scrub --config ...``, at most
    :data:`FIX_IDS` of them; when there are more, a comment says so and that a rerun finds the rest."""
    shown = list(dict.fromkeys(str(i) for i in ids))[:FIX_IDS]
    line = ctx.cmd(" ".join([verb, *shown, *([options] if options else [])]))
    if total > len(shown):
        line += f"  # the first {len(shown)} of {total}; audit again for the rest"
    return line


def skipped(chk: Check, reason: str) -> Skipped:
    return Skipped(code=chk.code, area=chk.area, reason=reason)


def counted(ctx: Context, where: str, columns: str, width: int = 60, order: str = "") -> tuple[int, list[str]]:
    """How many rows ``FROM ... WHERE ...`` selects, and up to ``ctx.examples`` of them as "id: text"
    (``columns`` names the id and the text, in that order; ``order``, when given, picks which)."""
    n = ctx.db.one(f"SELECT COUNT(*) {where}") or 0
    if not n:
        return 0, []
    rows = ctx.db.rows(f"SELECT {columns} {where}{' ORDER BY ' + order if order else ''} LIMIT ?", (ctx.examples,))
    return n, [f"{ident}: {clip(text, width)}" for ident, text in rows]


def clip(text: Any, width: int = 80) -> str:
    """A store's text for an example: credentials redacted (before shortening: a cut secret is no longer
    recognised), whitespace runs as one space, at most ``width`` characters."""
    return clip_plain(redacted(str(text or "")), width)


def clip_plain(text: str, width: int = 80) -> str:
    """:func:`clip` of a text known to hold no credential (no "secret" hit when the points were loaded): the same,
    without the redactor's scan."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


LEDGER_LIVE = live_sql("m", ":now")


def live_points(ctx: Context) -> tuple[str, str, dict[str, Any]]:
    """(FROM, WHERE, params) selecting the points reads would serve (``p`` = points, ``m`` = ledger row)."""
    params = {"now": ctx.now_iso, "today": ctx.now.date().isoformat()}
    unexpired = "(p.expiration_date IS NULL OR p.expiration_date = '' OR p.expiration_date >= :today)"
    led = ctx.db.ledger
    if ctx.db.sources.ledger and led is not None:
        return (
            f"points p LEFT JOIN {led.keys} m ON m.memory_id = p.id",
            f"((m.memory_id IS NULL AND {unexpired}) OR ({led.live_key('m')}))",
            params,
        )
    return "points p", unexpired, params


# -- wording of finding titles ------------------------------------------------------------------------------
def n_memories(count: int, one: str = "memory", many: str = "memories") -> str:
    """ "1 memory", "3 memories" (or ``one``/``many``)."""
    return plural(count, one, many)


def is_are(count: int) -> str:
    return "is" if count == 1 else "are"


def has_have(count: int) -> str:
    return "has" if count == 1 else "have"


def was_were(count: int) -> str:
    return "was" if count == 1 else "were"
