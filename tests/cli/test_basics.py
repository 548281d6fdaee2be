"""The console script answers --version and --help."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from mem0_hygiene import __version__
from mem0_hygiene.cli import cli


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"mem0-hygiene, version {__version__}"


def test_python_dash_m_runs_the_same_cli():
    out = subprocess.run([sys.executable, "-m", "mem0_hygiene", "--help"], capture_output=True, text=True, check=True)
    assert "Keep an agent's mem0 memory true" in out.stdout
