"""What every output shows: ``printable`` and ``to_json`` redact credentials unless inside
``revealing_secrets()``, and escape control and bidirectional characters; JSON stays valid, readable
for other scripts, and parses back to the same text."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

from mem0_hygiene.render.json import to_json
from mem0_hygiene.render.text import printable, redacted, redacted_data, revealing_secrets, secrets_revealed

KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4Y5z6"[:48]
TEXT = f"The bot's key is {KEY}"
SHOWN = "The bot's key is [redacted openai_api_key]"
CONTROLS = (
    "\x1b[2J \x07 \x7f \u0085 \u009b31m \u202e \u202a \u2066 \u2067 \u2068 \u2069 \u200e \u200f \u061c \u2028 \u2029"
)


def test_printable_redacts_credentials_unless_revealing():
    assert printable(TEXT) == SHOWN
    with revealing_secrets():
        assert printable(TEXT) == TEXT
    assert printable(TEXT) == SHOWN


def test_printable_redacts_before_it_shortens():
    text = "x" * 30 + " postgres://app:Pg-s3cr3t-9x7@db.internal/app"
    assert "s3cr3t" not in printable(text, 60)


def test_printable_escapes_every_control_and_bidirectional_character():
    out = printable(CONTROLS)
    assert out.isprintable() and out.isascii()
    assert out == (
        "\\x1b[2J \\x07 \\x7f \\x85 \\x9b31m \\u202e \\u202a \\u2066 \\u2067 \\u2068 \\u2069 \\u200e "
        "\\u200f \\u061c \\u2028 \\u2029"
    )


def test_revealing_secrets_is_scoped_to_the_block_and_to_its_thread():
    seen: list[bool] = []
    with revealing_secrets():
        assert secrets_revealed()
        with revealing_secrets(False):
            assert not secrets_revealed() and redacted(TEXT) == SHOWN
        assert secrets_revealed() and redacted(TEXT) == TEXT
        worker = threading.Thread(target=lambda: seen.append(secrets_revealed()))
        worker.start()
        worker.join()
    assert not secrets_revealed()
    assert seen == [False]  # a thread that did not ask keeps the default


def test_redacted_data_redacts_string_values_at_any_depth_and_keeps_keys_and_other_values():
    data = {
        "text": TEXT,
        "items": [{"source": TEXT, "n": 3, "ok": True, "none": None}],
        "pair": (TEXT, 1.5),
        f"key {KEY}": 1,
    }
    assert redacted_data(data) == {
        "text": SHOWN,
        "items": [{"source": SHOWN, "n": 3, "ok": True, "none": None}],
        "pair": [SHOWN, 1.5],
        f"key {KEY}": 1,
    }
    with revealing_secrets():
        assert redacted_data(data) is data


@dataclass(frozen=True)
class _Item:
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"text": self.text}


def test_to_json_redacts_credentials_also_in_values_it_converts_itself():
    out = json.loads(to_json({"items": [TEXT, _Item(TEXT)], "set": {TEXT}}))
    assert out == {"items": [SHOWN, {"text": SHOWN}], "set": [SHOWN]}
    with revealing_secrets():
        assert json.loads(to_json({"items": [TEXT, _Item(TEXT)]})) == {"items": [TEXT, {"text": TEXT}]}


def test_to_json_escapes_control_and_bidirectional_characters_and_round_trips():
    data = {"text": CONTROLS, CONTROLS: ["ok"]}
    out = to_json(data)
    assert all(ch == "\n" or ch.isprintable() for ch in out), ascii(out)
    for escape in (
        "\\u001b[2J",
        "\\u0007",
        "\\u007f",
        "\\u0085",
        "\\u009b31m",
        "\\u202e",
        "\\u2066",
        "\\u2069",
        "\\u061c",
        "\\u2028",
    ):
        assert escape in out
    assert json.loads(out) == data


def test_to_json_keeps_other_non_ascii_text_readable():
    data = {"text": "נועה רוצה את הסיכום בעברית … café", "ar": "نوعا عايزة الملخص بالعبري"}
    out = to_json(data)
    assert "נועה רוצה את הסיכום בעברית … café" in out and "نوعا عايزة الملخص بالعبري" in out
    assert json.loads(out) == data


def test_the_html_report_escapes_and_redacts_the_findings_details_too():
    from mem0_hygiene.render import format_html
    from mem0_hygiene.report import Finding, Report, Severity

    finding = Finding(
        code="X",
        severity=Severity.WARNING,
        area="content",
        title="t",
        count=1,
        examples=(),
        why="",
        fix="",
        details={"path": "/srv/\u202eevil\x1b[2J", "note": TEXT},
    )
    page = format_html(Report(findings=(finding,), target="t"))
    assert not any(c in page for c in ("\u202e", "\x1b")) and KEY not in page
    assert "\\u202eevil\\x1b[2J" in page and "[redacted openai_api_key]" in page
