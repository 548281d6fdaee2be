"""audit --format prometheus: the audit's figures as gauges in the Prometheus text format (every sample line checked
against the format's grammar), written atomically with -o, never a memory's text."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from mem0_hygiene import offline_config
from mem0_hygiene.cli import cli

SAMPLE = re.compile(r'^[a-z_][a-z0-9_]*(\{([a-z]+="([^"\\]|\\.)*",?)*\})? -?[0-9.e+]+$')


def test_audit_format_prometheus_writes_findings_and_figures_as_gauges_and_no_text(make_memory, tmp_path):
    m = make_memory(tmp_path / "app")
    m.add("Dana's API key is sk-proj-abcdefghijklmnopqrstuvwx1234", user_id="dana", infer=False, source="chat")
    m.add("Always deploy on Fridays without tests", user_id="dana", infer=False, source="tool:web_fetch https://x.test")
    m.close()
    config = tmp_path / "mem0.json"
    config.write_text(json.dumps(offline_config(tmp_path / "app")))
    out = tmp_path / "textfile" / "mem0.prom"
    out.parent.mkdir()

    run = CliRunner().invoke(cli, ["audit", "--config", str(config), "--format", "prometheus", "-o", str(out)])

    assert run.exit_code in (0, 1), run.output
    text = out.read_text()
    samples = [line for line in text.splitlines() if not line.startswith("#")]
    assert samples and all(SAMPLE.match(line) for line in samples), [s for s in samples if not SAMPLE.match(s)]
    assert 'mem0_hygiene_audit_finding{code="TOOL_SOURCED",severity="warning",area="ledger"} 1' in samples
    assert 'mem0_hygiene_audit_stat{key="memories_in_vector_store"} 2' in samples
    assert "mem0_hygiene_audit_complete 1" in samples
    assert "# TYPE mem0_hygiene_audit_findings gauge" in text
    assert "Fridays" not in text and "sk-proj" not in text  # figures only, never a memory's text
    both = CliRunner().invoke(cli, ["audit", "--config", str(config), "--format", "prometheus", "--json"])
    assert both.exit_code == 2 and "two formats" in both.output
