"""The memory core as a subcommand of ``memrl train``: ``core:NAME --core.SETTING VALUE``, one
subcommand per registered core (or task model), its flags the core's own fields. tyro builds the
core while it parses; ``from_command_line`` turns what it built into the learner's config, checked
then. ``core_flags_spelled`` writes the earlier spelling, ``--core NAME --core-args SETTING VALUE``,
as this one."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import sys
from typing import Annotated, Union

import tyro

from memrl.learn.run_config import ConfigRecord, config_checks
from memrl.registry import held_settings


def core_choices(config_class, saved: ConfigRecord | None):
    """The cores (and task models) ``config_class`` takes, one tyro subcommand each (``core:lstm``),
    each defaulting to what its name makes (the saved run's core under its own name); their settings
    take a value each, ``--core.straight-through False``, as ``--core-args`` gives them."""
    choices = []
    for registry in config_class.core_registries():
        for name in registry.names():
            if name.endswith("/"):
                continue
            made = saved.core if saved is not None and saved.core_name == name else registry.make(name)
            about = summary(registry, name, made)
            choices.append(
                Annotated[
                    checked_after_parsing(type(made)),
                    tyro.conf.subcommand(name, default=as_parsed(made), description=about),
                ]
            )
    return Annotated[Union[tuple(choices)], tyro.conf.FlagConversionOff]  # noqa: UP007


@functools.cache
def checked_after_parsing(core_class):
    """``core_class`` as the command line builds it: a subclass that keeps a setting its checks
    refuse instead of raising while tyro parses (tyro would draw its own box around memrl's one-line
    message); ``from_command_line`` builds the core itself from its settings, checked then."""

    def __post_init__(self):
        try:
            core_class.__post_init__(self)
        except ValueError:
            pass

    namespace = {"__post_init__": __post_init__, "__module__": core_class.__module__, "__doc__": core_class.__doc__}
    return type(core_class.__name__, (core_class,), namespace)


def as_parsed(core):
    """``core`` as the command line holds it while parsing (``checked_after_parsing``)."""
    return checked_after_parsing(type(core))(**held_settings(core))


def summary(registry, name: str, made) -> str:
    """One line for a core's subcommand: the title of its module's docstring, its class and what its name fixes."""
    title = (sys.modules[type(made).__module__].__doc__ or "").strip().split("\n")[0].split(" (")[0].rstrip(".,;:")
    fixed = [f"{k}={v!r}" for k, v in registry.fixed(name).items()]
    return f"{title} ({', '.join([type(made).__name__, *fixed])})"


def command_line_class(config_class, saved: ConfigRecord | None):
    """``config_class`` with its ``core`` typed as ``core_choices`` for tyro, defaulting to the
    learner's core (or the saved run's); ``from_command_line`` turns what tyro builds back into the
    config itself."""
    default = (
        saved.core
        if saved is not None
        else config_class.core_registry(config_class.default_core_name()).make(config_class.default_core_name())
    )
    command_line = dataclasses.make_dataclass(
        config_class.__name__,
        [("core", core_choices(config_class, saved), dataclasses.field(default_factory=lambda: as_parsed(default)))],
        bases=(config_class,),
        frozen=True,
    )
    command_line.__doc__ = config_class.__doc__
    return command_line


def as_command_line(cls, config: ConfigRecord):
    """``config``'s fields as an instance of ``cls`` (unchecked: what the command line parses is checked after)."""
    fields = {field.name: getattr(config, field.name) for field in dataclasses.fields(config)}
    with config_checks(enabled=False):
        return cls(**fields | {"core": as_parsed(config.core)})


def from_command_line(parsed: ConfigRecord, config_class) -> ConfigRecord:
    """The ``config_class`` config of what tyro built as its ``command_line_class``, checked as it is constructed."""
    fields = {field.name: getattr(parsed, field.name) for field in dataclasses.fields(config_class)}
    core_class = type(parsed.core).__mro__[1]  # checked_after_parsing's base
    return config_class(**fields | {"core": core_class(**held_settings(parsed.core))})


def core_flags_spelled(argv: list[str], config_class, saved: ConfigRecord | None) -> list[str]:
    """``memrl train``'s ``argv`` with ``--core NAME`` and ``--core-args SETTING VALUE ...`` written as
    the core's subcommand, ``core:NAME --core.SETTING VALUE ...`` (settings of the core named, else of
    the saved run's core, else of the learner's default core); refuses settings the core does not
    have, and settings its name fixes."""
    rest, name, settings = [], None, None
    i = 0
    while i < len(argv):
        flag = argv[i]
        if flag == "--core" or flag.startswith("--core="):
            name = flag.split("=", 1)[1] if "=" in flag else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if "=" in flag else 2
        elif flag == "--core-args":
            values = list(itertools.takewhile(lambda a: not a.startswith("--"), argv[i + 1 :]))
            if len(values) % 2:
                raise ValueError(f"--core-args takes SETTING VALUE pairs, got {' '.join(values) or 'nothing'}")
            settings = dict(zip(values[::2], values[1::2]))
            i += 1 + len(values)
        else:
            rest.append(flag)
            i += 1
    chosen = next((a.split(":", 1)[1] for a in rest if a.startswith("core:")), None)
    if name is not None and chosen is not None:
        raise ValueError(f"--core {name} and core:{chosen} both name the core; give one")
    where = " (--core-args)" if settings is not None else " (--core.SETTING)"
    if name is None and settings is None:
        name = chosen
        settings = {a.split("=", 1)[0][len("--core.") :]: None for a in rest if a.startswith("--core.")}
        if name is None:
            return argv
    else:
        settings = settings or {}
        if name is None:
            name = chosen or (saved.core_name if saved is not None else config_class.default_core_name())
        rest = [a for a in rest if not a.startswith("core:")]
        rest += [f"core:{name}"] + [a for key, value in settings.items() for a in (f"--core.{key}", value)]
    registry = config_class.core_registry(name)
    registry.refuse_unknown(name, [k.replace("-", "_") for k in settings], where)
    return rest
