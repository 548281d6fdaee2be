"""The audit's examples never carry a credential: ``clip`` redacts before it shortens (a cut secret is no longer
recognised) and ``finding`` redacts every example; inside ``revealing_secrets()`` they show in full."""

from __future__ import annotations

from mem0_hygiene.auditing.checks.base import clip, finding
from mem0_hygiene.render.text import revealing_secrets
from mem0_hygiene.report import Severity

PASSWORD = "Pg-s3cr3t-9x7"
# Cut at 60 characters, the URL loses its "@host" and the detector would no longer see a password in it.
TEXT = "Dana's notes from the migration: postgres://app:" + PASSWORD + "@db.internal:5432/app"


def test_clip_redacts_before_it_cuts_the_text():
    assert TEXT[:59].endswith(PASSWORD[:11])  # a plain cut keeps most of the password, without its "@host"
    out = clip(TEXT, 60)
    assert PASSWORD[:5] not in out and out.startswith("Dana's notes from the migration: postgres://app:[redacted")


def test_finding_redacts_every_example():
    key = "sk-proj-" + "Ab3" * 16
    f = finding("X", Severity.INFO, "content", "t", examples=[f"m1: {key}", "m2: fine"])
    assert f.examples == ("m1: [redacted openai_api_key]", "m2: fine")


def test_examples_show_in_full_inside_revealing_secrets():
    with revealing_secrets():
        assert PASSWORD in clip(TEXT, 80)
        assert finding("X", Severity.INFO, "content", "t", examples=[TEXT]).examples == (TEXT,)
