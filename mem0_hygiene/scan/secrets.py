"""Credentials in memory text: ``find_secrets(text)`` finds provider API keys (AWS secret access keys beside
their name or key id included), private keys, bearer tokens, JWTs and passwords in prose or in connection
strings; only a redacted form (``redact``) leaves here."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .anchors import anchor_index


@dataclass(frozen=True)
class SecretHit:
    """One credential found in a memory's text.

    kind: the family of the credential, one of ``SECRET_KINDS`` ("openai_api_key", "private_key",
        "password_assignment", ...).
    redacted: the matched secret with everything after its first characters replaced by its length,
        e.g. "sk-p…(56 chars)". At most 4 characters are kept, and never more than a quarter of the
        secret, so a short password ("hunter2!" -> "hu…(8 chars)") is not half given away.
    """

    kind: str
    redacted: str


SECRET_KINDS = (
    "anthropic_api_key",
    "openai_api_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "github_token",
    "slack_token",
    "slack_webhook",
    "stripe_key",
    "google_api_key",
    "huggingface_token",
    "private_key",
    "jwt",
    "connection_string_password",
    "bearer_token",
    "password_assignment",
    "secret_assignment",
)


def redact(secret: str) -> str:
    """The secret's first characters (at most 4, at most a quarter of it) and its length."""
    keep = min(4, len(secret) // 4)
    return f"{secret[:keep]}…({len(secret)} chars)"


# --- credentials -------------------------------------------------------------------------------

_PLACEHOLDERS = frozenset(
    {
        "password", "passwd", "pass", "pwd", "secret", "token", "redacted", "hidden", "masked", "none",
        "null", "nil", "empty", "example", "placeholder", "your_password", "yourpassword",
        "your-password", "mypassword", "todo", "tbd", "n/a", "na", "unknown", "user", "username",
    }
)  # fmt: skip

# Words that follow "password is" / "password:" in ordinary prose and are not passwords.
_NOT_A_PASSWORD = frozenset(
    {
        "the", "a", "an", "in", "on", "at", "to", "of", "for", "with", "from", "by", "via", "and", "or",
        "not", "no", "yes", "set", "unset", "same", "different", "required", "optional", "mandatory",
        "needed", "necessary", "wrong", "right", "correct", "incorrect", "invalid", "valid", "weak",
        "strong", "long", "short", "secure", "insecure", "private", "personal", "public", "blank",
        "reset", "old", "new", "default", "temporary", "temp", "standard", "generic", "simple",
        "complex", "easy", "hard", "fine", "ok", "okay", "good", "bad", "great", "random", "unique",
        "common", "known", "his", "her", "my", "your", "our", "their", "its", "this", "that", "these",
        "those", "it", "them", "something", "anything", "nothing", "everything", "see", "check", "ask",
        "use", "per", "every", "each", "one", "two", "three", "four", "five", "six", "eight", "ten",
        "twelve", "manager", "policy", "change", "rotation", "hint", "field", "prompt", "length",
        "characters", "chars", "min", "max", "minimum", "maximum", "least", "most", "must", "should",
        "will", "can", "may", "might", "needs", "need", "has", "have", "had", "expires", "changes",
        "also", "still", "now", "too", "very", "really", "available", "missing", "lost", "here",
        "there", "below", "above", "elsewhere", "case", "sensitive", "auth", "login", "sso", "vault",
        "keychain", "bitwarden", "lastpass", "1password", "dashlane", "keepass", "env", "environment",
    }
)  # fmt: skip
_ADJECTIVE_ENDINGS = ("ed", "ing", "ly", "able", "ible", "ful", "less", "ous", "ive", "ure", "ent", "ant")
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*")
_UNIT_AFTER = re.compile(r"\s*\+?\s*(?:characters?|chars?|digits?|letters?|symbols?|long|or\s+more|minimum)\b", re.I)

# "password for the staging box is": one to four words between the keyword and the verb.
_MID = r"(?:\s+(?:for|of|to|on|at|in)(?:\s+[^\s!?;:=,.\"']+(?:\.[^\s!?;:=,.\"']+)*){1,4}?)?"
_ASSIGN = (
    r"[\"']?(?:\s*(?P<op>:=|=|:)\s*"
    r"|\s+(?P<verb>is|was)\s+(?:now\s+|still\s+|currently\s+|just\s+|actually\s+|set\s+to\s+|changed\s+to\s+)?)"
)
_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9])(?P<kw>password|passwd|passphrase|passcode|pwd|pass|pw)(?![A-Za-z0-9])"
    + _MID
    + _ASSIGN
    + r"(?:\"(?P<dq>[^\"\n]{1,128})\"|'(?P<sq>[^'\n]{1,128})'|`(?P<bq>[^`\n]{1,128})`|(?P<bare>[^\s\"'`]{1,128}))",
    re.I,
)
# Anchored at the last word of "api_key", "apikey", "client_secret", "access token", ...: what comes
# before it does not matter, a 16+ character token with letters and digits after it does.
_SECRET_ASSIGNMENT = re.compile(
    r"(?:(?<![a-z0-9])|(?<=api)|(?<=secret)|(?<=access)|(?<=auth))(?:key|token|secret)s?(?![a-z0-9])"
    + _MID
    + _ASSIGN
    + r"[\"'`]?(?P<s>[A-Za-z0-9_\-+/=.~]{16,256})",
    re.I,
)


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


def _looks_random(value: str) -> bool:
    """A token, not a word: a digit, or upper case after the first letter next to lower case."""
    return _has_digit(value) or (any(c.isupper() for c in value[1:]) and any(c.islower() for c in value))


def _is_placeholder(value: str) -> bool:
    low = value.lower()
    return (
        low in _PLACEHOLDERS
        or set(low) <= set("*x•.…-_")
        or low[0] in "<{[$%("
        or "environ" in low
        or low.startswith(("env:", "env.", "process.env", "getenv"))
    )


def _password_value(m: re.Match[str]) -> tuple[int, int] | None:
    """Where the password an assignment match names stands, or None when the words after "password" are prose."""
    value = _password_text(m)
    if value is None:
        return None
    group = next(g for g in ("dq", "sq", "bq", "bare") if m.group(g) is not None)
    start = m.string.find(value, m.start(group))
    return start, start + len(value)


def _password_text(m: re.Match[str]) -> str | None:
    short_keyword = m.group("kw").lower() in ("pass", "pw")
    if short_keyword and not m.group("op"):
        return None  # "the pass is valid": only "pass:" / "pass=" can be credentials
    quoted = m.group("dq") or m.group("sq") or m.group("bq")
    if quoted is not None:
        value = quoted.strip()
        return value if len(value) >= 3 and not _is_placeholder(value) else None
    bare = m.group("bare")
    value = bare.rstrip(".,;:)]}")
    if len(value) < 3 or _is_placeholder(value) or _UNIT_AFTER.match(m.string, m.end()):
        return None
    if _PLAIN_WORD.fullmatch(value):
        if short_keyword:
            return None  # "Boarding pass: Delta"
        low = value.lower()
        if low in _NOT_A_PASSWORD or low.endswith(_ADJECTIVE_ENDINGS):
            return None
        # A plain word is a password only when it closes its clause: "the wifi password is swordfish."
        # but not "the password is stored in 1Password".
        closes = value != bare or m.end() == len(m.string) or m.string[m.end()] in "\n\"'`"
        if not closes:
            return None
    return value


def _secret_assignment_value(m: re.Match[str]) -> tuple[int, int] | None:
    value = m.group("s")
    has_letter = any(c.isalpha() for c in value)
    return m.span("s") if _has_digit(value) and has_letter and not _is_placeholder(value) else None


def _group_if(accept: Callable[[str], bool]) -> Callable[[re.Match[str]], tuple[int, int] | None]:
    def pick(m: re.Match[str]) -> tuple[int, int] | None:
        return m.span("s") if accept(m.group("s")) else None

    return pick


def _plain(m: re.Match[str]) -> tuple[int, int] | None:
    return m.span("s")


# An AWS secret access key: 40 characters of base64 (no padding), standing alone. Only ever taken beside its name
# ("aws_secret_access_key", "secret key", "secret") or near an AKIA/ASIA key id: alone, 40 characters look like
# too many other things.
_AWS_SECRET_TOKEN = r"(?<![A-Za-z0-9/+])(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
_AWS_SECRET_ANYWHERE = re.compile(_AWS_SECRET_TOKEN)
_AWS_SECRET_NAMED = re.compile(
    r"(?:(?<![A-Za-z0-9_])|(?<=aws_)|(?<=aws-))secret(?:[ _-]?access)?(?:[ _-]?key)?s?(?![a-z0-9])"
    + _MID
    + r"(?:"
    + _ASSIGN
    + r"|\s+)[\"'`]?"
    + _AWS_SECRET_TOKEN,
    re.I,
)
_AWS_KEY_ID = r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
_NEAR_KEY_ID = 120  # characters between a key id and its secret ("access key AKIA... and its secret ...")
_HEX = frozenset("0123456789abcdef")


def _aws_secret_shape(value: str) -> bool:
    """Random base64, not a word, a path or a hex digest (a git SHA is 40 hex digits): both cases, and a digit
    or a plus."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() or c == "+" for c in value)
        and not set(value.lower()) <= _HEX
        and not _is_placeholder(value)
    )


def _named_aws_secret(m: re.Match[str]) -> tuple[int, int] | None:
    return m.span("s") if _aws_secret_shape(m.group("s")) else None


def _aws_secret_near_key_id(m: re.Match[str]) -> tuple[int, int] | None:
    """The nearest secret-shaped token after the key id (within ``_NEAR_KEY_ID`` characters), else before it."""
    text = m.string
    before: tuple[int, int] | None = None
    for token in _AWS_SECRET_ANYWHERE.finditer(text, max(0, m.start() - _NEAR_KEY_ID - 40)):
        if token.start() > m.end() + _NEAR_KEY_ID:
            break
        if not _aws_secret_shape(token.group("s")):
            continue
        if token.start() >= m.end():
            return token.span("s")
        if token.end() <= m.start():
            before = token.span("s")
    return before


_DB_SCHEME_BEFORE = re.compile(
    r"(?<![A-Za-z0-9+.-])(?:postgres(?:ql)?|pgsql|mysql|mariadb|mongodb|rediss?|amqps?|mqtts?|nats|kafka|mssql"
    r"|sqlserver|oracle|cockroachdb|clickhouse|couchdbs?|neo4j|bolt|snowflake|elasticsearch|influxdb|ftps?"
    r"|sftp|ssh|smtps?|imaps?|pop3s?|ldaps?|wss?|https?)(?:\+[a-z0-9]+)?\Z",
    re.I,
)


def _connection_password(m: re.Match[str]) -> tuple[int, int] | None:
    """The password of a ``scheme://user:pass@host`` match whose scheme is one that carries credentials."""
    if not _DB_SCHEME_BEFORE.search(m.string, max(0, m.start() - 40), m.start()):
        return None
    return None if _is_placeholder(m.group("s")) else m.span("s")


@dataclass(frozen=True)
class _SecretRule:
    kind: str
    anchors: tuple[str, ...]  # lowercase; the regex is tried only where one of them starts in the text
    regex: re.Pattern[str]  # begins exactly at the anchor
    secret: Callable[[re.Match[str]], tuple[int, int] | None]  # where the secret of a match is, or None: no hit


# Order is priority: where two secrets overlap, the earlier (more specific) rule keeps it.
_SECRET_RULES = (
    _SecretRule(
        "anthropic_api_key",
        ("sk-",),
        re.compile(r"(?<![A-Za-z0-9_-])(?P<s>sk-ant-[A-Za-z0-9_-]{20,})"),
        _group_if(_has_digit),
    ),
    _SecretRule(
        "openai_api_key",
        ("sk-",),
        re.compile(r"(?<![A-Za-z0-9_-])(?P<s>sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})"),
        _group_if(_has_digit),
    ),
    _SecretRule(
        "aws_access_key_id",
        ("akia", "asia"),
        re.compile(r"(?<![A-Za-z0-9])(?P<s>(?:AKIA|ASIA)[A-Z0-9]{16})(?![A-Za-z0-9])"),
        _plain,
    ),
    _SecretRule("aws_secret_access_key", ("secret",), _AWS_SECRET_NAMED, _named_aws_secret),
    _SecretRule("aws_secret_access_key", ("akia", "asia"), re.compile(_AWS_KEY_ID), _aws_secret_near_key_id),
    _SecretRule(
        "github_token",
        ("ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"),
        re.compile(r"(?<![A-Za-z0-9_])(?P<s>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
        _plain,
    ),
    _SecretRule(
        "slack_webhook",
        ("hooks.slack.com/",),
        re.compile(r"(?P<s>hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,})"),
        _plain,
    ),
    _SecretRule(
        "slack_token",
        ("xox",),
        re.compile(r"(?<![A-Za-z0-9])(?P<s>xox[abposr]-[A-Za-z0-9-]{10,})"),
        _group_if(_has_digit),
    ),
    _SecretRule(
        "stripe_key",
        ("sk_", "rk_"),
        re.compile(r"(?<![A-Za-z0-9_])(?P<s>[sr]k_(?:live|test)_[A-Za-z0-9]{16,})"),
        _plain,
    ),
    _SecretRule(
        "google_api_key",
        ("aiza",),
        re.compile(r"(?<![A-Za-z0-9_-])(?P<s>AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])"),
        _plain,
    ),
    _SecretRule(
        "huggingface_token",
        ("hf_",),
        re.compile(r"(?<![A-Za-z0-9_])(?P<s>hf_[A-Za-z0-9]{30,})(?![A-Za-z0-9_])"),
        _plain,
    ),
    _SecretRule(
        "private_key",
        ("-----begin",),
        re.compile(
            r"(?P<s>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:(?:[^-]|-(?!----)){0,16384}-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"|[A-Za-z0-9+/=\s\\:,-]*[A-Za-z0-9+/=])?)"
        ),
        _plain,
    ),
    _SecretRule(
        "jwt",
        ("eyj",),
        re.compile(r"(?<![A-Za-z0-9_-])(?P<s>eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*)"),
        _plain,
    ),
    _SecretRule(
        "connection_string_password",
        ("://",),
        re.compile(r"://[^\s:/@]*:(?P<s>[^\s/]+)@[^\s/@:]+"),
        _connection_password,
    ),
    _SecretRule(
        "bearer_token",
        ("bearer",),
        re.compile(r"\bbearer\s+(?P<s>[A-Za-z0-9._~+/=-]{16,})", re.I),
        _group_if(_looks_random),
    ),
    _SecretRule("password_assignment", ("pass", "pw"), _PASSWORD, _password_value),
    _SecretRule("secret_assignment", ("key", "token", "secret"), _SECRET_ASSIGNMENT, _secret_assignment_value),
)


_Trie = dict[str, "_Trie"]

# Secrets hide inside words ("DB_PASSWORD=", "token=sk-..."), so their anchors count anywhere.
_SECRET_ANCHORS, _SECRET_RULES_BY_ANCHOR = anchor_index([rule.anchors for rule in _SECRET_RULES], word_start=False)


def find_secrets(text: str) -> list[SecretHit]:
    """Credentials in ``text``, in order of appearance, each only in redacted form.

    Provider keys are recognised by their documented prefixes and lengths (OpenAI ``sk-``/``sk-proj-``,
    Anthropic ``sk-ant-``, AWS ``AKIA``/``ASIA``, GitHub ``ghp_``/``gho_``/``ghs_``/``github_pat_``,
    Slack ``xox?-`` and webhooks, Stripe ``sk_live_``/``rk_live_`` and their ``_test_`` twins, Google
    ``AIza``, Hugging Face ``hf_``), AWS secret access keys (40 characters of base64 beside
    ``aws_secret_access_key``/``secret key``/``secret`` or within a sentence of an ``AKIA``/``ASIA`` key id; never a
    40-digit hex digest such as a git SHA); then PEM private keys (the whole block), JWTs, URLs with a password
    (``postgres://user:pass@host``, ``redis://:pass@host``, ``https://user:token@host``, ...),
    ``Bearer <token>``, password assignments in prose or config ("password: X", "pwd is X", "the
    password for the DB is X") and ``api_key = <token>``-style assignments. Placeholders
    (``<password>``, ``${DB_PASS}``, ``****``) and prose ("rotate the password monthly", "the password is
    stored in 1Password") are not hits. A secret two rules match (a JWT after "Bearer") is reported
    once, by the more specific rule.
    """
    return [SecretHit(kind=kind, redacted=redact(text[start:end])) for start, end, kind in secret_spans(text)]


def secret_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every credential in ``text`` (the rules of :func:`find_secrets`), in order, never
    overlapping: what a redactor replaces."""
    low = text.lower()
    candidates: list[tuple[int, re.Match[str]]] = []  # (rule priority, match)
    if len(low) == len(text):
        for anchor in _SECRET_ANCHORS.finditer(low):
            for priority in _SECRET_RULES_BY_ANCHOR[anchor.group()]:
                m = _SECRET_RULES[priority].regex.match(text, anchor.start())
                if m is not None:
                    candidates.append((priority, m))
    else:  # lowercasing changed the length (rare scripts): positions in `low` do not fit `text`
        for priority, rule in enumerate(_SECRET_RULES):
            if any(anchor in low for anchor in rule.anchors):
                candidates.extend((priority, m) for m in rule.regex.finditer(text))
    if not candidates:
        return []
    taken: list[tuple[int, int, str]] = []
    for priority, m in sorted(candidates, key=lambda c: (c[0], c[1].start())):
        span = _SECRET_RULES[priority].secret(m)
        if span is None or span[0] >= span[1]:
            continue
        start, end = span
        if all(end <= s or e <= start for s, e, _ in taken):
            taken.append((start, end, _SECRET_RULES[priority].kind))
    taken.sort()
    return taken


def redact_secrets(text: str, marker: str = "[redacted {kind}]") -> tuple[str, list[str]]:
    """``text`` with every credential replaced by ``marker`` (``{kind}`` names its kind), and the kinds found in
    order. Cheap when the text holds nothing that looks like a credential (one anchor scan)."""
    spans = secret_spans(text)
    if not spans:
        return text, []
    out, last = [], 0
    for start, end, kind in spans:
        out.append(text[last:start])
        out.append(marker.format(kind=kind))
        last = end
    out.append(text[last:])
    return "".join(out), [kind for _s, _e, kind in spans]
