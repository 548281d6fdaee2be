"""What every output shows: ``printable`` and ``to_json`` redact credentials unless inside
``revealing_secrets()``."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

from mem0_hygiene.render.json import to_json
from mem0_hygiene.render.text import printable, redacted, redacted_data, revealing_secrets, secrets_revealed

KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4Y5z6"[:48]
TEXT = f"The bot's key is {KEY}"
SHOWN = "The bot's key is [redacted openai_api_key]"
def test_printable_redacts_credentials_unless_revealing():
    assert printable(TEXT) == SHOWN
    with revealing_secrets():
        assert printable(TEXT) == TEXT
    assert printable(TEXT) == SHOWN


def test_printable_redacts_before_it_shortens():
    text = "x" * 30 + " postgres://app:Pg-s3cr3t-9x7@db.internal/app"
    assert "s3cr3t" not in printable(text, 60)


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
    data = {"text": TEXT, "items": [{"source": TEXT, "n": 3, "ok": True, "none": None}], "pair": (TEXT, 1.5),
            f"key {KEY}": 1}
    assert redacted_data(data) == {"text": SHOWN, "items": [{"source": SHOWN, "n": 3, "ok": True, "none": None}],
                                   "pair": [SHOWN, 1.5], f"key {KEY}": 1}
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
