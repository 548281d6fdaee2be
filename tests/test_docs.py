"""The README stays a short front page that links into the docs, every finding code is documented (on the docs'
generated finding codes page) and every command has help text."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from mem0_hygiene.auditing.checks.base import REGISTRY
from mem0_hygiene.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_every_finding_code_is_documented_on_the_generated_findings_page_the_readme_links():
    assert len(REGISTRY) >= 29  # the registry is complete on import, not only after mem0_hygiene.audit ran
    page = (ROOT / "docs" / "reference" / "findings.md").read_text()
    assert "```{finding-codes}" in page  # the table is written from REGISTRY at build time (docs/_ext)
    assert [chk.code for chk in REGISTRY if not (chk.means.strip() and chk.fix.strip())] == []
    assert "(docs/reference/findings.md)" in README


def test_the_readme_is_a_short_front_page():
    assert len(README.encode()) <= 12 * 1024


def test_every_relative_link_of_the_readme_names_a_file_of_the_repository():
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README)
    assert links and [link for link in links if not (ROOT / link).is_file()] == []


def test_the_check_registry_is_complete_in_a_fresh_interpreter_that_imports_only_the_registry():
    code = "from mem0_hygiene.auditing.checks import REGISTRY; print(len(REGISTRY), len({c.code for c in REGISTRY}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) == len(REGISTRY) and int(out[1]) >= 29


def test_inspect_then_audit_are_both_the_functions_not_modules():
    code = (
        "from mem0_hygiene import inspect\nfrom mem0_hygiene import audit\n"
        "import types\nprint(callable(audit), callable(inspect), isinstance(audit, types.ModuleType))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True", "False"]


def test_every_command_has_help_text_and_a_working_help_option():
    for name, command in cli.commands.items():
        assert command.help and command.help.strip(), name
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0, name


def test_readme_has_exactly_two_set_up_commands_and_ci_runs_the_test_one():
    setup = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for line in setup.splitlines() if line.startswith("    ")]
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = commands[1]
    install = test_command.split("&&")[1].strip().replace(".venv/bin/pip install ", "")
    assert install in ci
    assert ".venv/bin/pytest" in ci


def test_every_public_name_resolves():
    import mem0_hygiene

    assert sorted(mem0_hygiene.__all__) == sorted([*mem0_hygiene._EXPORTS, "__version__"])
    for name in mem0_hygiene.__all__:
        assert getattr(mem0_hygiene, name) is not None
