"""The one rich console that memrl's commands print to. Printed to a file or a pipe (a log, ``| tee``),
it is 160 columns wide rather than rich's 80, so tables such as ``memrl bench``'s keep their cells whole;
``COLUMNS`` still sets the width."""

import os
import sys

from rich.console import Console

PIPED_WIDTH = 160

console = Console(width=None if sys.stdout.isatty() or "COLUMNS" in os.environ else PIPED_WIDTH)
