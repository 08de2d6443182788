"""memrl's console printed to a pipe is wide enough for its tables, and COLUMNS still sets its width."""

import os
import subprocess
import sys

from memrl.console import PIPED_WIDTH


def console_width(**env) -> int:
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | env
    script = "from memrl.console import console; print(console.width)"
    return int(
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=environment, check=True
        ).stdout
    )


def test_a_piped_console_is_wider_than_richs_80_columns():
    assert console_width() == PIPED_WIDTH > 80


def test_columns_sets_the_width():
    assert console_width(COLUMNS="100") == 100
