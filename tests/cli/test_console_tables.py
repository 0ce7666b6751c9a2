"""Tables piped to a file or a log keep every cell whole; on a terminal they fit its width."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = (
    "from fairstream.cli import console;"
    "console.table('T', ['part', 'higher', 'lower', 'first violated', 'raw gap then', 'evidence'],"
    " [('false_positive_rate', 'African-American', 'Caucasian', '2015-01-15', 0.284, 'lower bound 0.1292')])"
)


def test_a_piped_table_is_as_wide_as_its_cells():
    env = {"PATH": "", "NO_COLOR": "1", "TERM": "dumb"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, check=True).stdout
    assert "false_positive_rate" in out and "African-American" in out and "lower bound 0.1292" in out
    assert "…" not in out
