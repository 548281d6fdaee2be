"""Hygiene settings and the mem0 config they ride in. Path resolution only; no other I/O.

A mem0 config dict may carry an optional ``"hygiene"`` section. :func:`split_config` takes it out
(mem0 never sees it) and turns it into :class:`HygieneSettings`; :func:`build_mem0_config` builds
mem0's own ``MemoryConfig`` from the rest, accepting the ``"offline"`` embedder and LLM providers.
"""

from __future__ import annotations

import copy
import difflib
import importlib
import inspect
import os
import re
from dataclasses import MISSING, dataclass, field, fields
from datetime import timedelta
from typing import Any

from mem0.configs.base import MemoryConfig
from mem0.embeddings.configs import EmbedderConfig
from mem0.llms.configs import LlmConfig
from mem0.utils.factory import EmbedderFactory, LlmFactory
from pydantic import BaseModel

from .errors import ConfigError
from .offline import DEFAULT_DIMS, OFFLINE_PROVIDER
from .timeutil import Clock, parse_duration, system_clock

LEDGER_FILENAME = "hygiene.db"
ON_VOLATILE_CHOICES = ("warn", "relocate", "error")
SECRET_POLICIES = ("redact", "refuse", "allow")
INSTRUCTION_POLICIES = ("flag", "quarantine", "allow")
DURATION_SETTINGS = ("retain_superseded", "review_older_than", "auto_prune")


def _number(value: Any, what: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{what} must be a number from {low} to {high}, not {value!r}")
    if not low <= float(value) <= high:
        raise ConfigError(f"{what} is {value}; it must be from {low} to {high}")
    return float(value)


def _options(value: Any, what: str, known: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{what} must be true, false or a dict of options, not {type(value).__name__}")
    unknown = sorted(set(value) - known)
    if unknown:
        raise ConfigError(
            f"unknown {what} option(s) {', '.join(unknown)}; the known ones are {', '.join(sorted(known))}"
        )
    return dict(value)


@dataclass(frozen=True)
class WriteDecisionSettings:
    """``hygiene.write_decision``: decide at ``add`` time whether each new memory is a duplicate of, an
    update to, a contradiction of, or unrelated to the nearest live memory in its scope (see
    :mod:`mem0_hygiene.memory.decision`). ``True`` turns it on with the defaults; a dict sets options.

    Fields:
        duplicate, update, contradiction: cosine-similarity thresholds; None takes the measured default
            for the configured embedder (:data:`mem0_hygiene.memory.decision.EMBEDDER_DEFAULTS`, in force through
            :func:`mem0_hygiene.memory.decision.thresholds_for`: the offline
            embedder 0.835/0.525/0.375, all-MiniLM-L6-v2 0.845/0.565/0.515; other embedders get MiniLM's
            and should be measured with ``benchmarks/eval_staleness.py``). Setting any threshold decides by the
            thresholds, not by the embedder's fitted model.
        candidates: how many nearest memories the one vector search per new memory returns (stale
            ones among them are skipped).
        identity_keys: metadata keys that name a fact's identity, besides ``add(topic_key=)``. The
            same key in the same scope always supersedes, whatever the similarity; different keys
            never merge.
        judge: None (decide by the model or the thresholds alone) or ``"llm"``: ask the app's mem0 LLM to
            judge each candidate the deterministic decision is unsure of (one call at most per stored fact), or
            ``"llm_batch"``: the same, asked about all the unsure candidates of one ``infer=True`` add in one call.
    """

    duplicate: float | None = None
    update: float | None = None
    contradiction: float | None = None
    candidates: int = 5
    identity_keys: tuple[str, ...] = ("topic_key", "source_ref")
    judge: str | None = None

    @classmethod
    def parse(cls, value: Any) -> WriteDecisionSettings | None:
        """None (off) from False/None, the defaults from True, options from a dict."""
        if isinstance(value, cls):
            return value
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        opts = _options(value, "hygiene.write_decision", {f.name for f in fields(cls)})
        for name in ("duplicate", "update", "contradiction"):
            if opts.get(name) is not None:
                opts[name] = _number(opts[name], f"hygiene.write_decision.{name}", -1.0, 1.0)
        if "candidates" in opts:
            if (
                isinstance(opts["candidates"], bool)
                or not isinstance(opts["candidates"], int)
                or not 1 <= opts["candidates"] <= 100
            ):
                raise ConfigError(
                    f"hygiene.write_decision.candidates is {opts['candidates']!r}; use a whole number from 1 to 100"
                )
        if "identity_keys" in opts:
            keys = opts["identity_keys"]
            if isinstance(keys, str) or not all(isinstance(k, str) and k for k in keys):
                raise ConfigError("hygiene.write_decision.identity_keys must be a list of metadata key names")
            opts["identity_keys"] = tuple(keys)
        if opts.get("judge") not in (None, "llm", "llm_batch"):
            raise ConfigError(
                f'hygiene.write_decision.judge is {opts["judge"]!r}; use "llm", "llm_batch" or leave it out'
            )
        settings = cls(**opts)
        if settings.duplicate is not None and settings.update is not None and settings.update > settings.duplicate:
            raise ConfigError(
                f"hygiene.write_decision.update ({settings.update}) is above duplicate "
                f"({settings.duplicate}); an update must be less similar than a duplicate"
            )
        return settings


@dataclass(frozen=True)
class RankSettings:
    """``hygiene.rank``: re-rank search results by relevance, recency and importance (Generative Agents).

    score = (relevance_w * relevance + recency_w * recency + importance_w * importance) / (sum of weights),
    each term in 0..1: relevance is mem0's score; recency is ``decay ** hours`` since the memory was last
    used or confirmed (0.995 per hour: a day ~0.89, a week ~0.43, a month ~0.03); importance comes from
    ``metadata[importance_key]`` (0..1, or 1..10 as in the paper, divided by 10) or ``default_importance``.
    Ranking reorders the page that relevance alone returns: it never hides a memory and never decides
    between contradicting ones (that is the write-time decision's job).

    Fields:
        relevance, recency, importance: the weights (>= 0, not all 0).
        decay: recency factor per hour, in (0, 1].
        default_importance: importance of a memory without one in its metadata (0..1).
        importance_key: the metadata key holding importance.
    """

    relevance: float = 1.0
    recency: float = 0.5
    importance: float = 0.5
    decay: float = 0.995
    default_importance: float = 0.5
    importance_key: str = "importance"

    @classmethod
    def parse(cls, value: Any) -> RankSettings | None:
        """None (off) from False/None, the defaults from True, options from a dict."""
        if isinstance(value, cls):
            return value
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        opts = _options(value, "hygiene.rank", {f.name for f in fields(cls)})
        for name in ("relevance", "recency", "importance"):
            if name in opts:
                opts[name] = _number(opts[name], f"hygiene.rank.{name}", 0.0, 1e6)
        if "decay" in opts:
            opts["decay"] = _number(opts["decay"], "hygiene.rank.decay", 0.0, 1.0)
            if opts["decay"] == 0.0:
                raise ConfigError("hygiene.rank.decay must be above 0 (0.995 per hour is the usual value)")
        if "default_importance" in opts:
            opts["default_importance"] = _number(
                opts["default_importance"], "hygiene.rank.default_importance", 0.0, 1.0
            )
        if "importance_key" in opts and not (isinstance(opts["importance_key"], str) and opts["importance_key"]):
            raise ConfigError("hygiene.rank.importance_key must be a metadata key name")
        settings = cls(**opts)
        if settings.relevance + settings.recency + settings.importance <= 0:
            raise ConfigError(
                "hygiene.rank: at least one of the weights relevance, recency, importance must be above 0"
            )
        return settings


LEDGER_URL_SCHEMES = ("postgresql://", "postgres://")


@dataclass
class HygieneSettings:
    """What the ``"hygiene"`` section of a config may hold.

    Fields:
        ledger_path: where the ledger lives; default ``hygiene.db`` beside mem0's history.db.
            ``":memory:"`` keeps it in memory (tests).
        ledger_url: ``postgresql://...``: the ledger on PostgreSQL instead (shared by every replica of the
            app; needs ``mem0-hygiene[postgres]``). Exclusive with ``ledger_path``.
        history_dbs: the other hosts' history.db files (``PATH`` or ``LABEL=PATH``), one per replica: the audit
            reads them with this deployment's own (mem0's ``history_db_path``) and ``where`` lists them.
        clock: a zero-argument callable returning the current UTC datetime (tests move it).
        trust_tool_output: store and extract from ``tool``/``function`` messages (quarantined).
        require_source: a write without ``source=`` is an error.
        retain_superseded: how long superseded/invalidated memories are kept before prune deletes them.
        review_older_than: confirmations older than this are due for review.
        on_volatile: what to do with a store on tmpfs/ramfs: "warn", "relocate" or "error";
            None means "relocate" for a defaulted vector-store path and "warn" for an explicit one.
        secrets: what a credential in a text to store becomes: "redact" (replaced by a marker naming its
            kind, before mem0 or its LLM sees it), "refuse" (nothing stored, an error) or "allow".
        instructions: what a text that reads as a standing order to the agent gets: "flag" (stored, marked
            in the ledger, first in the digest), "quarantine" (not served until confirmed) or "allow".
        use_flush_every: how many buffered ledger writes (new memories' rows, read hits, adoptions) trigger a
            write; new rows are also written within ``flush_after`` seconds.
        flush_after: seconds after which buffered ledger writes are written by a background timer (the
            ledger only: the vector store is never touched off the caller's thread). 0 writes at once.
        auto_prune: run prune at most once per this interval, in-process (None = off).
        write_decision: decide duplicate/update/contradiction/add for each new memory at ``add`` time
            (False = off, mem0's behaviour; True or a dict: :class:`WriteDecisionSettings`).
        rank: re-rank search results by relevance, recency and importance (False = off; True or a
            dict: :class:`RankSettings`).
        read_log: record which memories each ``search``/``get_all``/``get`` served, to which scope and caller
            (the read's ``source=`` label), in the ledger's ``reads`` table, batched with the other ledger writes;
            ``mem0-hygiene reads`` and the audit read it (off by default).
    """

    ledger_path: str | None = None
    ledger_url: str | None = None
    history_dbs: tuple[str, ...] = ()
    clock: Clock = system_clock
    trust_tool_output: bool = False
    require_source: bool = False
    retain_superseded: timedelta = timedelta(days=180)
    review_older_than: timedelta = timedelta(days=90)
    on_volatile: str | None = None
    secrets: str = "redact"
    instructions: str = "flag"
    use_flush_every: int = 64
    flush_after: float = 1.0
    auto_prune: timedelta | None = None
    write_decision: WriteDecisionSettings | bool | dict[str, Any] | None = None
    rank: RankSettings | bool | dict[str, Any] | None = None
    read_log: bool = False

    def __post_init__(self) -> None:
        for name in DURATION_SETTINGS:  # strings or timedeltas, each checked (up to 100 years)
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, parse_duration(value, what=f"hygiene.{name}"))
        self.write_decision = WriteDecisionSettings.parse(self.write_decision)
        self.rank = RankSettings.parse(self.rank)
        entries = [self.history_dbs] if isinstance(self.history_dbs, str) else self.history_dbs
        if not isinstance(entries, (list, tuple)) or not all(isinstance(e, str) and e for e in entries):
            raise ConfigError("hygiene.history_dbs must be a list of history.db paths (PATH or LABEL=PATH)")
        self.history_dbs = tuple(entries)
        if self.ledger_url is not None:
            if not isinstance(self.ledger_url, str) or not self.ledger_url.startswith(LEDGER_URL_SCHEMES):
                raise ConfigError(
                    "hygiene.ledger_url must be a postgresql://USER:PASSWORD@HOST/DATABASE URL; "
                    "for a SQLite file use hygiene.ledger_path"
                )
            if self.ledger_path is not None:
                raise ConfigError("give only one of hygiene.ledger_path (SQLite) and hygiene.ledger_url (PostgreSQL)")

    @property
    def ledger_location(self) -> str | None:
        """Where the ledger is, as the ledger opens it: the PostgreSQL URL, else the SQLite path (None:
        the default beside history.db)."""
        return self.ledger_url or self.ledger_path

    @classmethod
    def from_dict(cls, section: dict[str, Any] | None) -> HygieneSettings:
        section = dict(section or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(section) - known)
        if unknown:
            raise ConfigError(
                f"unknown hygiene setting(s) {', '.join(unknown)}; the known ones are {', '.join(sorted(known))}"
            )
        for name, choices in (("secrets", SECRET_POLICIES), ("instructions", INSTRUCTION_POLICIES)):
            if name in section and section[name] not in choices:
                raise ConfigError(f"hygiene.{name} is {section[name]!r}; use one of {', '.join(choices)}")
        if section.get("on_volatile") not in (None, *ON_VOLATILE_CHOICES):
            raise ConfigError(
                f"hygiene.on_volatile is {section['on_volatile']!r}; use one of {', '.join(ON_VOLATILE_CHOICES)}"
            )
        if not isinstance(section.get("read_log", False), bool):
            raise ConfigError(f"hygiene.read_log is {section['read_log']!r}; use true or false")
        if "clock" in section and not callable(section["clock"]):
            raise ConfigError("hygiene.clock must be a callable returning a UTC datetime")
        if "flush_after" in section:
            value = section["flush_after"]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"hygiene.flush_after is {value!r}; use a number of seconds >= 0 (0 writes at once)")
        return cls(**section)


@dataclass(frozen=True)
class SettingDoc:
    """One key of the ``"hygiene"`` section, as its settings class defines and documents it."""

    key: str
    default: str
    doc: str


SETTINGS_SECTIONS: tuple[tuple[str, type], ...] = (
    ("hygiene", HygieneSettings),
    ("hygiene.write_decision", WriteDecisionSettings),
    ("hygiene.rank", RankSettings),
)
"""Each part of the ``"hygiene"`` section and the class that defines its keys."""

_FIELD_ENTRY = re.compile(r"^( {4})([a-z_]+(?:, [a-z_]+)*): (.*)$")


def documented_fields(cls: type) -> dict[str, str]:
    """The ``Fields:`` entries of a settings class's docstring: field name -> its description, continuation
    lines joined (an entry naming several fields, ``a, b: ...``, documents each of them)."""
    doc = inspect.cleandoc(cls.__doc__ or "")  # indents removed, as Python 3.13+ compiles docstrings
    if "\nFields:\n" not in doc:
        return {}
    found: dict[str, str] = {}
    names: list[str] = []
    for line in doc.split("\nFields:\n", 1)[1].splitlines():
        entry = _FIELD_ENTRY.match(line)
        if entry:
            names = entry.group(2).split(", ")
            for name in names:
                found[name] = entry.group(3).strip()
        elif line.strip() and names:
            for name in names:
                found[name] += " " + line.strip()
    return found


def settings_reference() -> list[SettingDoc]:
    """Every key of the ``"hygiene"`` section with its default and its documentation, in definition order (the
    docs' configuration page is generated from this; a key without documentation has an empty ``doc``)."""
    out = []
    for section, cls in SETTINGS_SECTIONS:
        docs = documented_fields(cls)
        for f in fields(cls):
            factory: Any = f.default_factory
            default = f.default if f.default is not MISSING else factory()
            if isinstance(default, timedelta):
                shown = f"{default.days}d" if default.days and not default.seconds else f"{default.total_seconds():g}s"
            else:
                shown = getattr(default, "__name__", None) or repr(default)
            out.append(SettingDoc(f"{section}.{f.name}", str(shown), docs.get(f.name, "")))
    return out


@dataclass
class ConfigFacts:
    """What the user's config said, before mem0 filled in defaults.

    Fields:
        vector_path_defaulted: True when the config named no vector-store location and mem0 picked
            its default (``/tmp/qdrant`` for Qdrant).
        raw: a deep copy of the mem0 part of the config dict as given.
    """

    vector_path_defaulted: bool = False
    raw: dict[str, Any] = field(default_factory=dict)


def split_config(config: dict[str, Any] | None) -> tuple[dict[str, Any], HygieneSettings, ConfigFacts]:
    """Separate the hygiene section from the mem0 config. Objects in it (clients, clocks) are kept."""
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ConfigError(f"a mem0 config must be a dict, not {type(config).__name__}")
    mem0_part = {k: v for k, v in config.items() if k != "hygiene"}
    settings = HygieneSettings.from_dict(config.get("hygiene"))
    vs = mem0_part.get("vector_store") or {}
    vs_conf = vs.get("config") or {}
    provider = vs.get("provider", "qdrant")
    defaulted = provider == "qdrant" and not any(vs_conf.get(k) for k in ("path", "url", "host", "client"))
    try:
        raw = copy.deepcopy(mem0_part)
    except Exception:  # a live client object need not be copyable
        raw = dict(mem0_part)
    return mem0_part, settings, ConfigFacts(vector_path_defaulted=defaulted, raw=raw)


def _register_offline_providers() -> None:
    EmbedderFactory.provider_to_class.setdefault(OFFLINE_PROVIDER, "mem0_hygiene.offline.OfflineEmbedding")
    if OFFLINE_PROVIDER not in LlmFactory.provider_to_class:
        LlmFactory.register_provider(OFFLINE_PROVIDER, "mem0_hygiene.offline.OfflineLLM")


def _takes_dims(provider: str) -> bool:
    """Whether mem0's config for this vector-store provider has ``embedding_model_dims`` (Chroma's has not, and
    rejects it as an extra field); an unknown provider is left for mem0 to refuse."""
    try:
        module = importlib.import_module(f"mem0.configs.vector_stores.{provider}")
    except ImportError:
        return False
    models = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, BaseModel)]
    return any("embedding_model_dims" in m.model_fields for m in models if m.__module__ == module.__name__)


def build_mem0_config(mem0_part: dict[str, Any]) -> MemoryConfig:
    """mem0's ``MemoryConfig`` for a config dict, with the offline providers allowed.

    mem0 validates provider names against a fixed list, so an ``"offline"`` embedder or LLM is set
    on the validated config afterwards. With the offline embedder, the vector store's dimensions
    default to the embedder's.
    """
    _register_offline_providers()
    part = dict(mem0_part)
    embedder = dict(part.pop("embedder", None) or {})
    llm = dict(part.pop("llm", None) or {})
    offline_embedder = embedder.get("provider") == OFFLINE_PROVIDER
    if offline_embedder:
        emb_conf = dict(embedder.get("config") or {})
        dims = int(emb_conf.setdefault("embedding_dims", DEFAULT_DIMS))
        vs = dict(part.get("vector_store") or {})
        vs_conf = dict(vs.get("config") or {})
        if _takes_dims(str(vs.get("provider") or "qdrant")):
            vs_conf.setdefault("embedding_model_dims", dims)
        vs["config"] = vs_conf
        part["vector_store"] = vs
    try:
        config = MemoryConfig(**part)
        if offline_embedder:
            config.embedder = EmbedderConfig.model_construct(provider=OFFLINE_PROVIDER, config=emb_conf)
        elif embedder:
            config.embedder = EmbedderConfig(**embedder)
        if llm.get("provider") == OFFLINE_PROVIDER:
            config.llm = LlmConfig.model_construct(provider=OFFLINE_PROVIDER, config=dict(llm.get("config") or {}))
        elif llm:
            config.llm = LlmConfig(**llm)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"mem0 rejected the config: {_validation_message(exc)}") from exc
    return config


_INPUT_VALUE = re.compile(r",?\s*input_value=.*?(?=, input_type=|\]|$)", re.S)
_ERRORS_URL = re.compile(r"\s*For further information visit \S+")


def _validation_message(exc: Exception) -> str:
    """mem0's (pydantic's) message without the echoed input values, which may hold API keys."""
    text = _ERRORS_URL.sub("", _INPUT_VALUE.sub("", str(exc)))
    return " ".join(text.split())


MEM0_TOP_LEVEL_KEYS = frozenset(MemoryConfig.model_fields) | {"hygiene"}


def check_top_level_keys(config: dict[str, Any]) -> None:
    """Refuse a top-level key that mem0 would silently ignore but that looks like a typo of one it reads
    (``history_db_pth``): the store it names would otherwise be replaced by mem0's default."""
    for key in config:
        if key in MEM0_TOP_LEVEL_KEYS or not isinstance(key, str):
            continue
        close = difflib.get_close_matches(key, sorted(MEM0_TOP_LEVEL_KEYS), n=1, cutoff=0.8)
        if close:
            raise ConfigError(
                f"unknown config key {key!r}: did you mean {close[0]!r}? mem0 ignores keys it does "
                f"not know, so the store {close[0]} names would silently be mem0's default"
            )


def offline_config(
    directory: str | os.PathLike[str],
    *,
    collection: str = "mem0",
    hygiene: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A complete config dict for a local, offline deployment in one folder.

    Qdrant in ``DIR/qdrant``, history in ``DIR/history.db``, the ledger beside it, the offline
    embedder and LLM. Useful for examples, tests and the demo.
    """
    directory = os.fspath(directory)
    config: dict[str, Any] = {
        "vector_store": {
            "provider": "qdrant",
            "config": {"path": os.path.join(directory, "qdrant"), "collection_name": collection, "on_disk": True},
        },
        "embedder": {"provider": OFFLINE_PROVIDER},
        "llm": {"provider": OFFLINE_PROVIDER},
        "history_db_path": os.path.join(directory, "history.db"),
    }
    if hygiene:
        config["hygiene"] = dict(hygiene)
    return config


def default_ledger_path(history_db_path: str) -> str:
    """The ledger's default place: ``hygiene.db`` in the folder of mem0's history.db."""
    if history_db_path == ":memory:":
        return ":memory:"
    return os.path.join(os.path.dirname(os.path.abspath(history_db_path)), LEDGER_FILENAME)
