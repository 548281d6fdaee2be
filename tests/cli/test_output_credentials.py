"""Credentials that plain mem0 stored before the write guard existed are shown redacted in every output: the
terminal and ``--json`` of ``digest`` and ``review --list``, the result objects' HTML and ``inspect()`` frames. One
real store (local Qdrant on disk, history.db) written by plain mem0 only, 200 days ago, holding each kind the
detector knows that an older guard or plain mem0 let through: an AWS secret beside its key id (and beside the marker
an older guard left for the id), a PEM private key, a JWT and connection strings with passwords."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mem0_hygiene import maintenance, offline_config
from mem0_hygiene.cli import cli

DANA = {"user_id": "dana"}
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AWS_SECRET_2 = "Zq8Xv2bN5mK1pL7wR3tY9uI0oP4aS6dF2gH8jK1l"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkRhbmEifQ"
    ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
PEM_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
PEM = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----"
MONGO_PASS = "M0ng0-pa55"
PG_PASS = "Pg-s3cr3t-9x7"
TEXTS = [
    f"Backups use access key AKIAIOSFODNN7EXAMPLE secret {AWS_SECRET}",
    f"access key [redacted aws_access_key_id] secret {AWS_SECRET_2}",  # what an older guard stored
    f"The deploy key is {PEM}",
    f"Dana's API session is {JWT}",
    f"Atlas is mongodb+srv://admin:{MONGO_PASS}@cluster0.abcde.mongodb.net/app",
    f"Reports read postgresql://report:{PG_PASS}@db.internal/warehouse",
]
# The secrets, and pieces of them: a clipped example must not leak half a key.
PIECES = (
    "AKIAIOSFODNN7EXAMPLE",
    AWS_SECRET,
    AWS_SECRET[:20],
    AWS_SECRET_2,
    AWS_SECRET_2[:20],
    PEM_BODY,
    PEM_BODY[:16],
    JWT.split(".")[1],
    MONGO_PASS,
    PG_PASS,
)
MARKERS = (
    "[redacted aws_secret_access_key]",
    "[redacted private_key]",
    "[redacted jwt]",
    "[redacted connection_string_password]",
)


def leaks(text: str) -> list[str]:
    return [piece for piece in PIECES if piece in text]


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "1000"})
    assert "Traceback" not in result.output, result.output
    return result


@pytest.fixture(scope="module")
def legacy_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from mem0 import Memory as Mem0Memory

    from mem0_hygiene.config import build_mem0_config, split_config

    folder = tmp_path_factory.mktemp("legacy") / "store"
    config_path = folder.parent / "mem0.json"
    config_path.write_text(json.dumps(offline_config(folder)))
    written = (datetime.now(timezone.utc) - timedelta(days=200)).isoformat()
    m = Mem0Memory(build_mem0_config(split_config(offline_config(folder))[0]))
    try:
        for text in TEXTS:
            m.add(text, **DANA, infer=False, metadata={"created_at": written})
    finally:
        m.close()
        m.vector_store.client.close()
    yield {"path": str(config_path), "config": offline_config(folder)}


def test_digest_and_review_show_legacy_credentials_redacted_in_the_terminal_and_json(legacy_store):
    cfg = ("--config", legacy_store["path"])
    outputs = {
        "digest": run("digest", *cfg, "--since", "300d"),
        "digest --json": run("digest", *cfg, "--since", "300d", "--json"),
        "review --list": run("review", *cfg, "--list"),
        "review --json": run("review", *cfg, "--json"),
    }
    for name, result in outputs.items():
        assert result.exit_code in (0, 1), (name, result.output)
        assert leaks(result.output) == [], (name, result.output)
        assert all(marker in result.output for marker in MARKERS), (name, result.output)
    digest = json.loads(outputs["digest --json"].stdout)
    assert "Backups use access key [redacted aws_access_key_id] secret [redacted aws_secret_access_key]" in {
        item["text"] for item in digest["items"]
    }


def test_result_html_and_inspect_frames_show_legacy_credentials_redacted(legacy_store):
    config = legacy_store["config"]
    for result in (maintenance.digest(config, since="300d"), maintenance.review_queue(config)):
        html = result._repr_html_()
        assert leaks(html) == [] and all(marker in html for marker in MARKERS), type(result).__name__
        assert leaks(json.dumps(result.to_dict(), ensure_ascii=False)) == []
    pytest.importorskip("pandas", reason="the notebook extra is not installed")
    from mem0_hygiene import inspect

    insp = inspect(config)
    cells = " ".join(str(v) for frame in (insp.memories, insp.history) for v in frame.to_numpy().ravel())
    assert leaks(cells) == [] and all(marker in cells for marker in MARKERS)
    assert leaks(insp._repr_html_()) == []
