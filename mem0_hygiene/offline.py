"""An offline embedder and a placeholder LLM that mem0 can use: no network, no model download, no API key.

The embedder hashes words and character trigrams into a fixed-size vector (feature hashing), so texts
that share words are near neighbours and identical texts are identical vectors. It is deterministic
across processes and machines. It is good enough for tests, demos and audits; for production
similarity use a real embedding model.

Select them in a mem0 config dict with ``{"embedder": {"provider": "offline"}}`` and
``{"llm": {"provider": "offline"}}``; :func:`mem0_hygiene.config.build_mem0_config` registers them.
"""

from __future__ import annotations

import math
import re
import zlib
from typing import Any

from mem0.configs.embeddings.base import BaseEmbedderConfig
from mem0.configs.llms.base import BaseLlmConfig
from mem0.embeddings.base import EmbeddingBase
from mem0.llms.base import LLMBase

from .errors import HygieneError

OFFLINE_PROVIDER = "offline"
DEFAULT_DIMS = 256

_WORD_RE = re.compile(r"[\w']+", re.UNICODE)
_STOP = frozenset(
    "a an the is are was were be been to of in on at for and or it its this that with as by we i you".split()
)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _features(text: str) -> dict[str, float]:
    words = [w.lower() for w in _WORD_RE.findall(text)]
    feats: dict[str, float] = {}
    for word in words:
        if word in _STOP:
            continue
        stem = _stem(word)
        feats["w:" + stem] = feats.get("w:" + stem, 0.0) + 1.0
        padded = f"<{stem}>"
        for i in range(len(padded) - 2):
            key = "c:" + padded[i : i + 3]
            feats[key] = feats.get(key, 0.0) + 0.25
    if not feats and text.strip():
        feats["raw:" + text.strip().lower()] = 1.0
    return feats


def embed_text(text: str, dims: int = DEFAULT_DIMS) -> list[float]:
    """The offline embedding of one text: a unit vector of `dims` floats."""
    vec = [0.0] * dims
    for key, weight in _features(text).items():
        h = zlib.crc32(key.encode("utf-8"))
        sign = 1.0 if (h >> 31) & 1 else -1.0
        vec[h % dims] += sign * weight
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0.0:
        vec[0] = 1.0
        return vec
    return [v / norm for v in vec]


class OfflineEmbedding(EmbeddingBase):
    """mem0 embedder provider "offline": feature-hashed words and trigrams, no network."""

    def __init__(self, config: BaseEmbedderConfig | None = None) -> None:
        super().__init__(config)
        self.dims = int(self.config.embedding_dims or DEFAULT_DIMS)

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        if not isinstance(text, str):
            text = str(text)
        return embed_text(text, self.dims)


class OfflineLLM(LLMBase):
    """mem0 LLM provider "offline": there is no model behind it, so it refuses clearly.

    Everything that does not extract facts (``add(..., infer=False)``, search, get_all, delete,
    the audit) works with it. Tests replace ``generate_response`` with a mock.
    """

    def __init__(self, config: BaseLlmConfig | None = None) -> None:
        super().__init__(config)

    def generate_response(self, messages: Any, response_format: Any = None, **kwargs: Any) -> str:
        raise HygieneError(
            "the offline LLM cannot extract facts; call add(..., infer=False), or configure a real "
            "LLM provider in the mem0 config ('llm': {'provider': 'openai', ...})"
        )
