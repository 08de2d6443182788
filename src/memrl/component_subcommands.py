"""A run's components as subcommands of ``memrl train`` (and of ``memrl eval``, over the run's, and
``memrl sweep``, over the spec's base: ``components_class``): ``core:NAME --core.SETTING VALUE``,
``env:NAME --env.SETTING VALUE`` (and a supervised run's ``task:NAME --task.SETTING VALUE``), one
subcommand per registered name, its flags its settings. tyro builds each core and task while it
parses, and each environment's settings (``settings_class``); ``from_command_line`` turns what it
built into the learner's config, checked then. ``component_flags_spelled`` writes the earlier
spelling, ``--core NAME --core-args SETTING VALUE``, as this one."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import sys
from typing import Annotated, Union

import tyro

from memrl.envs.base import EnvironmentRegistry
from memrl.learn.run_config import ConfigRecord, SettingsByName
from memrl.registry import held_settings, recordable, same_value
from memrl.settings import fits, settings_of


def choices(config_class, field: str, saved: ConfigRecord | None, words: frozenset[str] = frozenset()):
    """The components ``field`` of ``config_class`` may be, one tyro subcommand each (``core:lstm``,
    ``env:tmaze/T-LN``; a family of environments, ``env:gymnasium --env.id CartPole-v1``), each
    defaulting to what its name makes (the saved run's under its own name); their settings take a
    value each, ``--core.straight-through False``, as ``--core-args`` gives them. An environment's
    settings are read (by making it) only where the command's ``words`` name it or it is the
    default: every environment's would take seconds, gymnax's import most of them."""
    options = []
    default = saved.name_of(field) if saved is not None else config_class.default_name(field)
    for registry in config_class.registries(field):
        for name in registry.names():
            subcommand = name.rstrip("/")
            description = summary(registry, name)
            own = is_named(default, name)
            if isinstance(registry, EnvironmentRegistry) and not (own or f"{field}:{subcommand}" in words):
                options.append(
                    Annotated[unread_class(registry, name), tyro.conf.subcommand(subcommand, description=description)]
                )
                continue
            saved_one = getattr(saved, field) if saved is not None and own else None
            parsed = parsed_form(registry, name, saved_one, config_class.set_by_the_run(field))
            chosen = tyro.conf.subcommand(
                subcommand, description=description, **({} if parsed is None else {"default": parsed})
            )
            parsed_class = settings_class(registry, name) if parsed is None else type(parsed)
            options.append(Annotated[parsed_class, chosen])
    return Annotated[Union[tuple(options)], tyro.conf.FlagConversionOff]  # noqa: UP007


def is_named(name: str, registered: str) -> bool:
    """Whether the registered name ``registered`` makes ``name`` (itself, or the family it belongs to)."""
    return name == registered or (registered.endswith("/") and name.startswith(registered))


def parsed_form(registry, name: str, made, set_by_the_run: tuple[str, ...] = ()):
    """``made`` (a component ``name`` makes; None: its defaults) as the command line holds it while
    parsing (a core or task as ``checked_after_parsing`` builds it, an environment's settings as
    ``settings_class`` holds them); None for a family with no member made (its ``id`` is required)."""
    if not isinstance(registry, EnvironmentRegistry):
        return parsed_default(registry, name, set_by_the_run) if made is None else as_parsed(made, set_by_the_run)
    settings = settings_class(registry, name)
    if made is None:
        return None if name.endswith("/") else settings()
    member, given = registry.name_of(made)
    if name.endswith("/"):
        return settings(id=member[len(name) :], saved=(member[len(name) :], given))
    return settings(**given)


@functools.cache
def settings_class(registry: EnvironmentRegistry, name: str) -> type:
    """The settings of the environment ``name`` as a dataclass for tyro: a field for each setting a
    config record can hold (``settings.settings_of``; a params array is the name's own), defaulting
    to the name's, its help the docstring under it. A family (``gymnasium/``) takes its member's
    ``id`` and that environment's settings by name (over a saved run's of the same id). A setting
    whose default does not fit its declared type (Craftax's ``fractal_noise_angles``, four Nones
    for ``tuple[int, int, int, int]``) is no flag: it keeps the name's default."""
    if name.endswith("/"):
        fields = [
            ("id", Annotated[str, tyro.conf.arg(help=f"the environment's id ({name}<id>)")]),
            (
                "settings",
                Annotated[SettingsByName, tyro.conf.arg(help="its settings: SETTING VALUE ...")],
                dataclasses.field(default_factory=dict),
            ),
            # a saved run's id and settings (--config), which those given change key by key (as the
            # default of ``settings``, tyro would make a fixed flag of each); another id has none of them
            ("saved", Annotated[tuple, tyro.conf.Suppress], dataclasses.field(default=("", {}))),
        ]
    else:
        fields = [
            (s.name, Annotated[s.hint, tyro.conf.arg(help=s.doc or None)], dataclasses.field(default=s.default))
            for s in settings_of(registry, name)
            if recordable(s.default) and not isinstance(s.hint, str) and fits(s.default, s.hint)
        ]
    namespace = {"registry": registry, "registered_as": name}
    return dataclasses.make_dataclass(settings_class_name(name), fields, frozen=True, namespace=namespace)


@functools.cache
def unread_class(registry: EnvironmentRegistry, name: str) -> type:
    """The subcommand of an environment the command does not name (``choices``): no settings read."""
    return dataclasses.make_dataclass(f"Unread{settings_class_name(name)}", [], frozen=True)


def settings_class_name(name: str) -> str:
    """``tmaze/T-LN`` -> ``TmazeTLnSettings``: a class name for an environment's settings."""
    return (
        "".join(part.capitalize() for part in name.replace("/", "_").replace("-", "_").split("_") if part) + "Settings"
    )


def environment_of(parsed):
    """The environment that ``parsed`` (a ``settings_class`` instance) describes, made as a config
    makes one (``EnvironmentRegistry.from_record``) from the settings that differ from its name's
    defaults; a family member's with its settings."""
    registry, name = parsed.registry, parsed.registered_as
    if name.endswith("/"):
        saved_id, saved = parsed.saved
        return registry.from_record(
            {"kind": name + parsed.id, **(saved if saved_id == parsed.id else {}), **parsed.settings}
        )
    defaults = registry.defaults(name)
    given = {k: v for k, v in held_settings(parsed).items() if not same_value(v, defaults.get(k))}
    return registry.from_record({"kind": name, **given})


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


@functools.cache  # every learner's subcommands default to it, and each parse builds them
def parsed_default(registry, name: str, set_by_the_run: tuple[str, ...] = ()):
    """``as_parsed`` of what ``name`` makes unless told (``Registry.default``), made once."""
    return as_parsed(registry.default(name), set_by_the_run)


def as_parsed(component, set_by_the_run: tuple[str, ...] = ()):
    """``component`` (a core, a task) as the command line holds it while parsing (``checked_after_parsing``)."""
    return checked_after_parsing(type(component), set_by_the_run)(**held_settings(component))


def summary(registry, name: str) -> str:
    """One line for a component's subcommand: the title of its module's docstring, its class (where
    the name builds one) and what its name fixes."""
    build = registry.entry(name).build
    made = getattr(build, "__self__", build)  # an environment's class, of its from_settings
    title = (
        (sys.modules[made.__module__].__doc__ or "")
        .strip()
        .split("\n")[0]
        .split(" (")[0]
        .rstrip(".,;:")
        .replace("``", "")
    )
    fixed = [f"{k}={v!r}" for k, v in registry.fixed(name).items()]
    parts = ([made.__name__] if isinstance(made, type) else []) + fixed
    return f"{title} ({', '.join(parts)})" if parts else title


def component_field(config_class, field: str, saved: ConfigRecord | None, words: frozenset[str]):
    """The component ``field`` of ``config_class`` as a field of a dataclass for tyro: its name, its
    ``choices`` (of the command's ``words``) and its default, the learner's (or the saved run's)."""
    if saved is None:
        name = config_class.default_name(field)
        registry, made = config_class.registry_for(field, name), None
    else:
        made = getattr(saved, field)
        registry = config_class.registry_of(field, made)
        name = registry.name_of(made)[0]
    parsed = parsed_form(registry, registry.family(name) or name, made, config_class.set_by_the_run(field))
    return field, choices(config_class, field, saved, words), dataclasses.field(default_factory=lambda: parsed)


def command_line_class(config_class, saved: ConfigRecord | None, words: frozenset[str] = frozenset()):
    """``config_class`` with each of its components typed as ``choices`` for tyro (of the command's
    ``words``), defaulting to the learner's (or the saved run's); ``from_command_line`` turns what
    tyro builds back into the config itself."""

    def __post_init__(self, *settings_by_name):
        """Nothing: what tyro fills holds the components' parse forms (and no ``*_args``: the command
        line spells them as the subcommands' flags), which ``from_command_line`` checks as it builds
        the config itself (tyro would draw its own box around memrl's one-line message)."""

    command_line = dataclasses.make_dataclass(
        config_class.__name__,
        [component_field(config_class, field, saved, words) for field in config_class.COMPONENTS],
        bases=(config_class,),
        namespace={"__post_init__": __post_init__},
        frozen=True,  # and compared field by field: tyro compares it while its components are parsed ones
    )
    command_line.__doc__ = config_class.__doc__
    return command_line


def components_class(saved: ConfigRecord, words: frozenset[str] = frozenset()):
    """The components of the config ``saved`` alone (``memrl eval``'s run, ``memrl sweep``'s base:
    ``core:NAME --core.SETTING VALUE``, ``env:NAME --env.SETTING VALUE``, ``task:NAME --task.SETTING
    VALUE``), each defaulting to its own; ``made()`` of what tyro parses is field -> component."""
    config_class = type(saved)

    def made(parsed) -> dict:
        return {
            field: component_from_command_line(getattr(parsed, field), config_class, field)
            for field in config_class.COMPONENTS
        }

    return dataclasses.make_dataclass(
        "Components",
        [component_field(config_class, field, saved, words) for field in config_class.COMPONENTS],
        namespace={"made": made},
    )


def as_command_line(cls, config: ConfigRecord):
    """``config``'s fields as an instance of ``cls``, the ``command_line_class`` made on it, its
    components the parsed forms that class defaults to (checked by ``from_command_line``)."""
    fields = {field.name: getattr(config, field.name) for field in dataclasses.fields(config)}
    return cls(**{name: value for name, value in fields.items() if name not in config.COMPONENTS})


def component_from_command_line(parsed_component, config_class, field: str):
    """The component ``field`` of a ``config_class`` config that tyro parsed as ``parsed_component``
    (a ``settings_class`` instance: its environment; else a ``checked_after_parsing`` core or task:
    its class built from its settings, checked then), bar the settings the run gives."""
    if hasattr(type(parsed_component), "registered_as"):
        return environment_of(parsed_component)
    component_class = type(parsed_component).__mro__[1]  # checked_after_parsing's base
    set_by_the_run = config_class.set_by_the_run(field)
    return component_class(**{k: v for k, v in held_settings(parsed_component).items() if k not in set_by_the_run})


def from_command_line(parsed: ConfigRecord, config_class) -> ConfigRecord:
    """The ``config_class`` config of what tyro built as its ``command_line_class``, checked as it is constructed."""
    fields = {field.name: getattr(parsed, field.name) for field in dataclasses.fields(config_class)}
    for field in config_class.COMPONENTS:
        fields[field] = component_from_command_line(fields[field], config_class, field)
    return config_class(**fields)


def component_flags_spelled(argv: list[str], config_class, saved: ConfigRecord | None) -> list[str]:
    """``memrl train``'s ``argv`` with each component's earlier spelling, ``--core NAME`` and
    ``--core-args SETTING VALUE ...``, written as its subcommand, ``core:NAME --core.SETTING VALUE
    ...`` (settings of the component named, else of the saved run's, else of the learner's default);
    refuses settings the component does not have, and settings its name fixes."""
    for field in config_class.COMPONENTS:
        argv = flags_spelled(argv, field, config_class, saved)
    return argv


def is_flag_or_subcommand(word: str, config_class) -> bool:
    """Whether ``word`` of ``argv`` is a flag or a component's subcommand (``core:lstm``), not a value."""
    return word.startswith("--") or any(word.startswith(f"{field}:") for field in config_class.COMPONENTS)


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
        name = chosen or (saved.name_of(field) if saved is not None else config_class.default_name(field))
        settings = {a.split("=", 1)[0][len(f"--{field}.") :]: None for a in rest if a.startswith(f"--{field}.")}
        if any(f"{name}/" in r.names() for r in config_class.registries(field)):
            return argv  # tyro checks a family's flags (--env.id, --env.settings)
    else:
        settings = settings or {}
        if name is None:
            name = chosen or (saved.name_of(field) if saved is not None else config_class.default_name(field))
        rest = [a for a in rest if not a.startswith(f"{field}:")]
        rest += subcommand_spelled(config_class, field, name, settings)
    if config_class.registry_for(field, name).family(name):
        return rest  # a family member's settings are its own (gymnasium.make checks them)
    keys = [k.replace("-", "_") for k in settings]
    by_the_run = sorted(set(keys) & set(config_class.set_by_the_run(field)))
    if by_the_run:
        raise ValueError(
            f"give {', '.join(by_the_run)} with {', '.join('--' + k.replace('_', '-') for k in by_the_run)}, "
            f"not as a {field} setting"
        )
    config_class.registry_for(field, name).refuse_unknown(name, keys, where)
    return rest


def subcommand_spelled(config_class, field: str, name: str, settings: dict) -> list[str]:
    """``core:NAME --core.SETTING VALUE ...`` for the component ``name`` of ``field`` with
    ``settings``; a family member's ``env:gymnasium --env.id ID --env.settings SETTING VALUE ...``."""
    family = config_class.registry_for(field, name).family(name)
    if family is None:
        return [f"{field}:{name}"] + [word for key, value in settings.items() for word in (f"--{field}.{key}", value)]
    words = [f"{field}:{family.rstrip('/')}", f"--{field}.id", name[len(family) :]]
    return words + ([f"--{field}.settings", *itertools.chain(*settings.items())] if settings else [])
