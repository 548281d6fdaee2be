"""The memory tools and credentials: what remember, correct and invalidate are given goes through the write guard's
detector (the AWS secret beside its key id included), the answer names each kind it redacted, and no store file
holds the credential (proven on the raw bytes of every file of the deployment)."""

from __future__ import annotations

from pathlib import Path

from mem0_hygiene.agent_tools import AgentTools

KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkRhbmEifQ"
    ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----"
TOKEN = "glpat9x8c7v6b5n4m"
PG_PASS = "Pg-s3cr3t-9x7"
SECRETS = (KEY_ID, AWS_SECRET, JWT, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", TOKEN, PG_PASS)


def leaks(*texts: object) -> list[str]:
    joined = " ".join(str(t) for t in texts)
    return [s for s in SECRETS if s in joined]


def store_leaks(folder: Path) -> list[str]:
    raw = b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())
    return [s for s in SECRETS if s.encode() in raw]


def test_remember_redacts_an_aws_secret_beside_its_key_id_and_says_both(make_memory, tmp_path):
    tools = AgentTools(make_memory(), user_id="dana")
    said = tools.remember(f"Backups use access key {KEY_ID} secret {AWS_SECRET}", source="chat")
    assert said.data["redacted"] == ["aws_access_key_id", "aws_secret_access_key"]
    assert said.data["memory"] == (
        "Backups use access key [redacted aws_access_key_id] secret [redacted aws_secret_access_key]"
    )
    assert "Redacted before storing: aws_access_key_id, aws_secret_access_key" in said.text
    assert leaks(said.text, said.data) == []
    tools.memory.close()
    assert store_leaks(tmp_path / "store") == []


def test_a_credential_in_the_source_a_client_gives_is_redacted_and_named(make_memory, tmp_path):
    tools = AgentTools(make_memory(), user_id="dana")
    said = tools.remember("Dana's repo moved to GitLab", source=f"chat; repo https://dana:{TOKEN}@gitlab.example.com/a")
    assert said.data["redacted"] == ["connection_string_password"] and "connection_string_password" in said.text
    tools.memory.flush()
    row = tools.memory.ledger.get(said.data["id"])
    assert row is not None and row.source == (
        "mcp:unknown-client chat; repo https://dana:[redacted connection_string_password]@gitlab.example.com/a"
    )
    tools.memory.close()
    assert store_leaks(tmp_path / "store") == []


def test_correct_and_invalidate_name_what_they_redacted_from_the_text_and_the_reason(make_memory, tmp_path):
    tools = AgentTools(make_memory(), user_id="dana")
    first = tools.remember("The deploy key is kept in the vault", source="chat").data["id"]
    corrected = tools.correct(first, f"The deploy key is\n{PEM}", reason=f"rotated, old session {JWT}")
    assert corrected.data["redacted"] == ["private_key", "jwt"]
    assert "Redacted before storing: private_key, jwt" in corrected.text
    second = tools.remember("The reporting DB is on db.internal", source="chat").data["id"]
    dropped = tools.invalidate(second, f"wrong, it is postgres://app:{PG_PASS}@db2.internal/app")
    assert dropped.data["redacted"] == ["connection_string_password"]
    assert "Redacted before storing the reason: connection_string_password" in dropped.text
    assert leaks(corrected.text, corrected.data, dropped.text, dropped.data) == []
    tools.memory.flush()
    assert tools.memory.ledger.get(second).invalid_reason == (
        "wrong, it is postgres://app:[redacted connection_string_password]@db2.internal/app"
    )
    tools.memory.close()
    assert store_leaks(tmp_path / "store") == []


def test_with_secrets_allowed_the_answer_claims_no_redaction(make_memory):
    tools = AgentTools(make_memory(secrets="allow"), user_id="dana")
    said = tools.remember(f"Backups use access key {KEY_ID} secret {AWS_SECRET}")
    assert said.data["redacted"] == [] and "Redacted" not in said.text
