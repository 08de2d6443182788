"""The one rich console that memrl's commands print to."""

from rich.console import Console

console = Console()
