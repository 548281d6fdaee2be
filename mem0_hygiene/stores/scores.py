"""Vector-store search scores in one scale: cosine similarity, whatever the provider.

mem0's providers score a search hit each in its own way (mem0ai 2.0.12 to 2.2.x alike):

- Qdrant: the collection's distance; mem0 makes collections with Cosine, whose score is the cosine;
- pgvector: ``max(0, 1 - d)`` with ``d`` the cosine distance (``<=>``): the cosine, clipped at 0;
- FAISS: ``distance_strategy`` "cosine" (vectors L2-normalized, inner product: the cosine), "inner_product"
  (the raw inner product), "euclidean" (``1 / (1 + d²)``, ``d²`` the squared L2 distance);
- Chroma: ``1 / (1 + d)`` with ``d`` the collection's ``hnsw:space`` distance: "l2" (squared L2, the
  default), "ip" (``1 - inner product``) or "cosine" (``1 - cosine``).

:func:`score_scale` reads which applies to an open mem0 vector store; :meth:`ScoreScale.cosine` turns a score
back into the cosine. An inner product or an L2 distance is a cosine only between unit vectors: those scales
are used when the query vector is unit length (an embedder that normalizes, or FAISS's ``normalize_L2``), and
refused otherwise. Where the scale cannot be known (another provider, another distance) :func:`score_scale`
raises a :class:`~mem0_hygiene.errors.ConfigError` naming the provider and the setting to change: a score is
never read on a guessed scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

EXACT = "cosine"
"""The score is the cosine already (Qdrant Cosine, pgvector, FAISS cosine)."""
INNER = "inner_product"
"""The score is the inner product: the cosine between unit vectors."""
INVERSE_SQUARED_L2 = "inverse_squared_l2"
"""``1 / (1 + d²)``, ``d²`` the squared L2 distance: ``cos = 1 - d² / 2`` between unit vectors."""
INVERSE_ONE_MINUS = "inverse_one_minus"
"""``1 / (1 + (1 - c))``, ``c`` the cosine (Chroma "cosine") or inner product (Chroma "ip")."""
L2 = "l2"
"""The L2 distance itself (Qdrant Euclid): ``cos = 1 - d² / 2`` between unit vectors."""
UNIT_TOLERANCE = 1e-3
"""How far from 1 a vector's norm may be and still count as unit length."""


@dataclass(frozen=True)
class ScoreScale:
    """How one open vector store scores: ``formula`` (one of the constants above), whether the conversion
    holds only between unit vectors, and what to tell a user whose vectors are not (``fix``)."""

    provider: str
    metric: str
    formula: str
    needs_unit: bool
    fix: str = ""

    def cosine(self, score: float | None, query: Sequence[float] | None = None) -> float:
        """``score`` as a cosine similarity (a missing score counts as 0). ``query``: the query vector, checked
        to be unit length when the conversion needs it (a :class:`ConfigError` when it is not)."""
        if score is None:
            return 0.0
        s = float(score)
        if self.needs_unit and query is not None:
            self.check_unit(query)
        if self.formula in (EXACT, INNER):
            return s
        if self.formula == INVERSE_SQUARED_L2:
            return 1.0 - (1.0 / s - 1.0) / 2.0 if s > 0 else -1.0
        if self.formula == INVERSE_ONE_MINUS:
            return 2.0 - 1.0 / s if s > 0 else -1.0
        if self.formula == L2:
            return 1.0 - s * s / 2.0
        raise ConfigError(f"unknown score formula {self.formula!r} for {self.provider}")  # pragma: no cover

    def from_cosine(self, cosine: float) -> float | None:
        """The store's score of a hit at cosine similarity ``cosine``: the inverse of :meth:`cosine` for the
        scales that grow with the cosine (None for a distance, which shrinks as the cosine grows)."""
        c = float(cosine)
        if self.formula in (EXACT, INNER):
            return c
        if self.formula == INVERSE_SQUARED_L2:
            return 1.0 / (1.0 + 2.0 * (1.0 - c))
        if self.formula == INVERSE_ONE_MINUS:
            return 1.0 / (2.0 - c)
        return None

    def check_unit(self, vector: Sequence[float]) -> None:
        """Raise a :class:`ConfigError` when ``vector`` is not unit length (this scale needs unit vectors)."""
        norm = math.sqrt(sum(float(x) * float(x) for x in vector))
        if abs(norm - 1.0) > UNIT_TOLERANCE:
            raise ConfigError(
                f"the {self.provider} store scores by {self.metric}, which is a cosine similarity only between "
                f"unit vectors, and this embedder's vectors are not (norm {norm:.3g}); the write decision "
                f"reads cosine similarity: {self.fix or 'use an embedder that normalizes its vectors'}"
            )


def score_scale(provider: str, vector_store: Any) -> ScoreScale:
    """The :class:`ScoreScale` of an open mem0 vector store of ``provider``; a :class:`ConfigError` naming the
    provider and how to set its distance when it cannot be known."""
    if provider == "pgvector":
        return ScoreScale(provider, "cosine distance", EXACT, False)
    if provider == "faiss":
        return _faiss(vector_store)
    if provider == "chroma":
        return _chroma(vector_store)
    if provider == "qdrant":
        return _qdrant(vector_store)
    raise ConfigError(
        f"the write decision reads search scores as cosine similarity, and how the {provider} store's scores "
        "map to it is not known here; use qdrant, pgvector, chroma or faiss as the vector store, or turn "
        "hygiene.write_decision off"
    )


def _faiss(vector_store: Any) -> ScoreScale:
    strategy = str(getattr(vector_store, "distance_strategy", "") or "").lower()
    normalized = bool(getattr(vector_store, "normalize_L2", False))
    fix = "set vector_store.config.distance_strategy: cosine (or normalize_L2: true)"
    if strategy == "cosine":
        return ScoreScale("faiss", "cosine", EXACT, False)
    if strategy == "inner_product":
        return ScoreScale("faiss", "inner product", INNER, True, fix)
    if strategy == "euclidean":
        return ScoreScale("faiss", "L2 distance", INVERSE_SQUARED_L2, not normalized, fix)
    raise ConfigError(
        f"the faiss store's distance_strategy {strategy!r} is not known here; set "
        "vector_store.config.distance_strategy to cosine, inner_product or euclidean"
    )


def _chroma(vector_store: Any) -> ScoreScale:
    collection = getattr(vector_store, "collection", None)
    space = None
    configuration = getattr(collection, "configuration", None)
    if isinstance(configuration, dict) and isinstance(configuration.get("hnsw"), dict):
        space = configuration["hnsw"].get("space")
    metadata = getattr(collection, "metadata", None)
    if space is None and isinstance(metadata, dict):
        space = metadata.get("hnsw:space")
    if space is None and collection is not None and metadata is None and configuration is None:
        space = "l2"  # a chromadb without collection configurations: its default space
    fix = "normalize the embedder's vectors, or use a Chroma collection made with metadata {'hnsw:space': 'cosine'}"
    if space == "cosine":
        return ScoreScale("chroma", "cosine distance", INVERSE_ONE_MINUS, False)
    if space == "ip":
        return ScoreScale("chroma", "inner product", INVERSE_ONE_MINUS, True, fix)
    if space == "l2":
        return ScoreScale("chroma", "squared L2 distance", INVERSE_SQUARED_L2, True, fix)
    raise ConfigError(
        f"the chroma collection's hnsw:space {space!r} cannot be read as a cosine similarity; use a collection "
        "made with metadata {'hnsw:space': 'cosine'} (or 'l2' or 'ip')"
    )


def _qdrant(vector_store: Any) -> ScoreScale:
    try:
        info = vector_store.client.get_collection(vector_store.collection_name)
        vectors = info.config.params.vectors
        params = vectors.get("") if isinstance(vectors, dict) else vectors
        distance = str(getattr(getattr(params, "distance", None), "value", getattr(params, "distance", "")))
    except Exception as exc:  # the client's errors vary: say what happened
        raise ConfigError(
            f"the qdrant collection's distance could not be read ({exc}); the write decision needs it to read "
            "search scores as cosine similarity"
        ) from exc
    fix = "use a collection with distance Cosine (mem0's default)"
    if distance.lower() == "cosine":
        return ScoreScale("qdrant", "cosine", EXACT, False)
    if distance.lower() == "dot":
        return ScoreScale("qdrant", "dot product", INNER, True, fix)
    if distance.lower() == "euclid":
        return ScoreScale("qdrant", "L2 distance", L2, True, fix)
    raise ConfigError(f"the qdrant collection's distance {distance!r} cannot be read as a cosine similarity; {fix}")
