"""What the command line hands a command of the components it parsed: each component made by its
name, or its refusal (``Refused``), which ``made`` raises as memrl's one line once tyro is done
(raised while tyro parses, it would be drawn in a box of tyro's, titled by tyro's inner names);
and a saved run's components as ``memrl eval`` and ``memrl sweep`` take them (``RunComponents``)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Refused:
    """A component (or config) that refused the settings given: its message."""

    message: str


def made(parsed):
    """``parsed`` as the command line made it; refuses a ``Refused`` one with its message."""
    if isinstance(parsed, Refused):
        raise ValueError(parsed.message)
    return parsed


def refused_in_one_line(make):
    """``make`` (what makes a component or config from its settings), its ValueError returned as a ``Refused``."""

    def making(**settings):
        try:
            return make(**settings)
        except ValueError as err:
            return Refused(str(err))

    return making


@dataclasses.dataclass(frozen=True)
class RunComponents:
    """A saved run's components as the command line gives them (``memrl eval RUN``, ``memrl sweep
    SPEC``: ``core:NAME --core.SETTING VALUE``, ``env:NAME ...``, ``task:NAME ...``), each the run's
    unless given: field -> component."""

    parsed: dict = dataclasses.field(default_factory=dict)

    def made(self) -> dict:
        """Each component given, refusing one that refused its settings."""
        return {field: made(component) for field, component in self.parsed.items()}
