"""A run's components as subcommands of ``memrl train``: ``core:NAME --core.SETTING VALUE`` (and a
supervised run's ``task:NAME --task.SETTING VALUE``), one subcommand per registered core (task),
its flags its own fields. tyro builds each component while it parses; ``from_command_line`` turns
what it built into the learner's config, checked then. ``component_flags_spelled`` writes the
earlier spelling, ``--core NAME --core-args SETTING VALUE``, as this one."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import sys
from typing import Annotated, Union

import tyro

from memrl.learn.run_config import ConfigRecord, SettingsByName, config_checks
from memrl.registry import held_settings


def choices(config_class, field: str, saved: ConfigRecord | None):
    """The components ``field`` of ``config_class`` may be, one tyro subcommand each (``core:lstm``),
    each defaulting to what its name makes (the saved run's under its own name); their settings take
    a value each, ``--core.straight-through False``, as ``--core-args`` gives them."""
    options = []
    for registry in config_class.registries(field):
        for name in registry.names():
            if name.endswith("/"):
                continue
            own = saved is not None and saved.name_of(field) == name
            made = getattr(saved, field) if own else registry.make(name)
            parsed = as_parsed(made, config_class.set_by_the_run(field))
            options.append(
                Annotated[
                    type(parsed),
                    tyro.conf.subcommand(name, default=parsed, description=summary(registry, name, made)),
                ]
            )
    return Annotated[Union[tuple(options)], tyro.conf.FlagConversionOff]  # noqa: UP007


@functools.cache
def checked_after_parsing(component_class, set_by_the_run: tuple[str, ...] = ()):
    """``component_class`` as the command line builds it: a subclass that keeps a setting its checks
    refuse instead of raising while tyro parses (tyro would draw its own box around memrl's one-line
    message; ``from_command_line`` builds the component itself from its settings, checked then),
    without flags for the settings the run gives (``set_by_the_run``)."""

    own_check = getattr(component_class, "__post_init__", None)

    def __post_init__(self):
        try:
            if own_check is not None:
                own_check(self)
        except ValueError:
            pass

    namespace = {
        "__post_init__": __post_init__,
        "__module__": component_class.__module__,
        "__doc__": component_class.__doc__,
    }
    if not set_by_the_run:  # a Linen module's subclass is a dataclass by itself
        return type(component_class.__name__, (component_class,), namespace)
    hidden = [
        (field.name, Annotated[field.type, tyro.conf.Suppress], dataclasses.field(default=field.default))
        for field in dataclasses.fields(component_class)
        if field.name in set_by_the_run
    ]
    return dataclasses.make_dataclass(
        component_class.__name__, hidden, bases=(component_class,), namespace=namespace, frozen=True
    )


def as_parsed(component, set_by_the_run: tuple[str, ...] = ()):
    """``component`` as the command line holds it while parsing (``checked_after_parsing``)."""
    return checked_after_parsing(type(component), set_by_the_run)(**held_settings(component))


def summary(registry, name: str, made) -> str:
    """One line for a component's subcommand: the title of its module's docstring, its class and what its name fixes."""
    title = (sys.modules[type(made).__module__].__doc__ or "").strip().split("\n")[0].split(" (")[0].rstrip(".,;:")
    fixed = [f"{k}={v!r}" for k, v in registry.fixed(name).items()]
    return f"{title} ({', '.join([type(made).__name__, *fixed])})"


def command_line_class(config_class, saved: ConfigRecord | None):
    """``config_class`` with each of its components typed as ``choices`` for tyro, defaulting to the
    learner's (or the saved run's), and each component named on the command line as its name and
    its settings by name (``--env NAME --env-args ...``: the saved run's settings are added after
    parsing, ``with_saved_settings``); ``from_command_line`` turns what tyro builds back into the
    config itself."""

    def default(field):
        made = getattr(saved, field) if saved is not None else config_class.default_component(field)
        return dataclasses.field(default_factory=lambda: as_parsed(made, config_class.set_by_the_run(field)))

    named = []
    for field in config_class.NAMED_ON_THE_COMMAND_LINE:
        name = saved.name_of(field) if saved is not None else config_class.default_name(field)
        kind = config_class.registries(field)[0].kind
        flag = f"registered {kind} name (memrl list; memrl list --{field} NAME shows the settings --{field}-args gives)"
        named += [
            (field, Annotated[str, tyro.conf.arg(help=flag)], dataclasses.field(default=name)),
            (f"{field}_args", SettingsByName, dataclasses.field(default_factory=dict)),
        ]
    subcommands = config_class.subcommands()

    def __post_init__(self, *settings_by_name):  # each subcommand's ``*_args``, in COMPONENTS order
        self.hold_components(dict(zip(subcommands, settings_by_name)))  # the named ones stay names while parsing

    command_line = dataclasses.make_dataclass(
        config_class.__name__,
        [(field, choices(config_class, field, saved), default(field)) for field in subcommands] + named,
        bases=(config_class,),
        namespace={"__post_init__": __post_init__},
        frozen=True,  # and compared field by field: tyro compares it while its components are parsed ones
    )
    command_line.__doc__ = config_class.__doc__
    return command_line


def as_command_line(cls, config: ConfigRecord):
    """``config``'s fields as an instance of ``cls`` (unchecked: what the command line parses is
    checked after), its named components by name with no settings (``with_saved_settings`` adds them)."""
    fields = {field.name: getattr(config, field.name) for field in dataclasses.fields(config)}
    with config_checks(enabled=False):
        parsed = {
            field: as_parsed(getattr(config, field), config.set_by_the_run(field)) for field in config.subcommands()
        }
        named = {field: config.name_of(field) for field in config.NAMED_ON_THE_COMMAND_LINE}
        return cls(**fields | parsed | named)


def with_saved_settings(parsed: ConfigRecord, saved: ConfigRecord) -> ConfigRecord:
    """What tyro built on ``saved`` (``--config``) with the saved settings of each component named on
    the command line under those given, key by key, while it names the saved one (another starts
    from none of them)."""
    given = {}
    for field in saved.NAMED_ON_THE_COMMAND_LINE:
        name, settings = saved.registry_of(field, getattr(saved, field)).name_of(getattr(saved, field))
        if getattr(parsed, field) == name:
            given[f"{field}_args"] = settings | getattr(parsed, f"{field}_args")
    with config_checks(enabled=False):
        return dataclasses.replace(parsed, **given)


def from_command_line(parsed: ConfigRecord, config_class) -> ConfigRecord:
    """The ``config_class`` config of what tyro built as its ``command_line_class``, checked as it is constructed."""
    fields = {field.name: getattr(parsed, field.name) for field in dataclasses.fields(config_class)}
    for field in config_class.subcommands():
        parsed_component = getattr(parsed, field)
        component_class = type(parsed_component).__mro__[1]  # checked_after_parsing's base
        set_by_the_run = config_class.set_by_the_run(field)
        own = {k: v for k, v in held_settings(parsed_component).items() if k not in set_by_the_run}
        fields[field] = component_class(**own)
    for field in config_class.NAMED_ON_THE_COMMAND_LINE:
        fields[f"{field}_args"] = getattr(parsed, f"{field}_args")
    return config_class(**fields)


def component_flags_spelled(argv: list[str], config_class, saved: ConfigRecord | None) -> list[str]:
    """``memrl train``'s ``argv`` with each component's earlier spelling, ``--core NAME`` and
    ``--core-args SETTING VALUE ...``, written as its subcommand, ``core:NAME --core.SETTING VALUE
    ...`` (settings of the component named, else of the saved run's, else of the learner's default);
    refuses settings the component does not have, and settings its name fixes."""
    for field in config_class.subcommands():
        argv = flags_spelled(argv, field, config_class, saved)
    return argv


def is_flag_or_subcommand(word: str, config_class) -> bool:
    """Whether ``word`` of ``argv`` is a flag or a component's subcommand (``core:lstm``), not a value."""
    return word.startswith("--") or any(word.startswith(f"{field}:") for field in config_class.subcommands())


def flags_spelled(argv: list[str], field: str, config_class, saved: ConfigRecord | None) -> list[str]:
    """``component_flags_spelled`` for the component ``field``."""
    rest, name, settings = [], None, None
    i = 0
    while i < len(argv):
        flag = argv[i]
        if flag == f"--{field}" or flag.startswith(f"--{field}="):
            name = flag.split("=", 1)[1] if "=" in flag else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if "=" in flag else 2
        elif flag == f"--{field}-args":
            values = list(itertools.takewhile(lambda a: not is_flag_or_subcommand(a, config_class), argv[i + 1 :]))
            if len(values) % 2:
                raise ValueError(f"--{field}-args takes SETTING VALUE pairs, got {' '.join(values) or 'nothing'}")
            settings = dict(zip(values[::2], values[1::2]))
            i += 1 + len(values)
        else:
            rest.append(flag)
            i += 1
    chosen = next((a.split(":", 1)[1] for a in rest if a.startswith(f"{field}:")), None)
    if name is not None and chosen is not None:
        raise ValueError(f"--{field} {name} and {field}:{chosen} both name the {field}; give one")
    where = f" (--{field}-args)" if settings is not None else f" (--{field}.SETTING)"
    if name is None and settings is None:
        name = chosen
        settings = {a.split("=", 1)[0][len(f"--{field}.") :]: None for a in rest if a.startswith(f"--{field}.")}
        if name is None:
            return argv
    else:
        settings = settings or {}
        if name is None:
            name = chosen or (saved.name_of(field) if saved is not None else config_class.default_name(field))
        rest = [a for a in rest if not a.startswith(f"{field}:")]
        rest += [f"{field}:{name}"] + [a for key, value in settings.items() for a in (f"--{field}.{key}", value)]
    keys = [k.replace("-", "_") for k in settings]
    by_the_run = sorted(set(keys) & set(config_class.set_by_the_run(field)))
    if by_the_run:
        raise ValueError(
            f"give {', '.join(by_the_run)} with {', '.join('--' + k.replace('_', '-') for k in by_the_run)}, "
            f"not as a {field} setting"
        )
    config_class.registry_for(field, name).refuse_unknown(name, keys, where)
    return rest
