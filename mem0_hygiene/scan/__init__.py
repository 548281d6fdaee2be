"""The pure text scanners for memory text: credentials, standing orders to the agent, duplicate keys.

Functions the audit runs over every memory's text and the renderers over everything they show, with no
I/O and no state. This package imports nothing else of mem0_hygiene, so every layer may use it:

- ``find_secrets(text)``: credentials that must never live in memory (provider API keys, private keys,
  bearer tokens, JWTs, passwords in prose or in connection strings). Only a redacted form leaves here.
- ``redact_secrets(text)``: the text with each of those credentials replaced by a marker naming its kind
  (``[redacted openai_api_key]``): what the write guard stores and what every output shows unless told to
  reveal secrets; ``secret_spans(text)`` gives where they stand.
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
    "INSTRUCTION_LABELS",
    "SECRET_KINDS",
    "SecretHit",
    "find_secrets",
    "instruction_reason",
    "normalize_for_duplicates",
    "redact",
    "redact_secrets",
    "secret_spans",
]
