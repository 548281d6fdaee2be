"""The pure text scanners for memory text: credentials, standing orders to the agent, duplicate keys.

Three functions the audit runs over every memory's text, with no I/O and no state:

- ``find_secrets(text)``: credentials that must never live in memory (provider API keys, private keys,
  bearer tokens, JWTs, passwords in prose or in connection strings). Only a redacted form leaves here.
- ``instruction_reason(text)``: a short label when the text reads as a standing order to the agent
  (the shape prompt injection through memory takes) rather than a fact about the user or the world.
- ``normalize_for_duplicates(text)``: the key under which exact duplicates collide.

They run on every memory of a store (100k texts in one audit), so the work is one pass per family:
a single compiled regex finds the anchors (key prefixes, "password", "always", "ignore", ...) in the
lowercased text, and each rule's own regex is tried only where its anchor stands. A text with no
anchor costs one regex scan.
"""

from .duplicates import normalize_for_duplicates
from .instructions import INSTRUCTION_LABELS, instruction_reason
from .secrets import SECRET_KINDS, SecretHit, find_secrets, redact, redact_secrets, secret_spans

__all__ = [
    "INSTRUCTION_LABELS", "SECRET_KINDS", "SecretHit", "find_secrets", "instruction_reason", "normalize_for_duplicates",
    "redact", "redact_secrets", "secret_spans",
]
