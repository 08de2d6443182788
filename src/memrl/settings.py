"""The settings of a registered core, environment or task as tyro reads them (``settings_of``: each
field of what the registry makes by default and, for an environment, of its params, with its type,
default and the docstring written under it), which the command line's flags and ``memrl list``
show; and the types of command options that carry their allowed range (``Count``, ``Seed``, ``LearningRate``,
``OutputFolder``), which the command line checks by type, whatever an option is called."""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NamedTuple

from tyro.constructors import ConstructorRegistry, StructConstructorSpec, StructFieldSpec, StructTypeInfo

from memrl.registry import Registry, of_type, recordable


class Allowed(NamedTuple):
    """What a command option or a config's field of this type may be: ``what`` says it, ``fits``
    tests a value (of the type: a wrong type is refused first)."""

    what: str
    fits: Callable[[Any], bool]


Count = Annotated[int, Allowed("a positive integer", lambda value: not isinstance(value, bool) and value >= 1)]
"""a setting that counts something: at least 1"""
NonNegativeInt = Annotated[int, Allowed(">= 0", lambda value: value >= 0)]
"""an integer setting that may be 0 (0 turns it off)"""
Seed = NonNegativeInt
"""a random seed: at least 0"""
Positive = Annotated[float, Allowed("> 0", lambda value: value > 0)]
"""a number above 0 (a step size, a clip, an ε)"""
NonNegative = Annotated[float, Allowed(">= 0", lambda value: value >= 0)]
"""a number that may be 0 (a loss weight)"""
Fraction = Annotated[float, Allowed("within [0.0, 1.0]", lambda value: 0.0 <= value <= 1.0)]
"""a number in [0, 1] (a discount, a probability)"""
Widths = Annotated[tuple[int, ...], Allowed("positive integers", lambda value: all(width >= 1 for width in value))]
"""layer sizes, one per layer"""
LearningRate = Annotated[float, Allowed("a finite number > 0", lambda value: math.isfinite(value) and value > 0)]
"""a step size: finite and above 0"""
CoreName = Annotated[str, Allowed("a core's registered name (memrl list)", lambda value: bool(value))]
"""one core of a command that compares several (``tuple[CoreName, ...]``: one or more)"""
OUTPUT_FOLDER = Allowed("a folder (or a path where one can be made)", lambda value: True)
OutputFolder = Annotated[Path, OUTPUT_FOLDER]
"""a folder a command writes to (the command line checks that it can be one before anything runs)"""


def allowed_of(hint) -> Allowed | None:
    """The ``Allowed`` marker of an option's type (``Count``, ``X | None``), or None."""
    if typing.get_origin(hint) is Annotated:
        return next((m for m in hint.__metadata__ if isinstance(m, Allowed)), None)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return next(filter(None, map(allowed_of, typing.get_args(hint))), None)
    return None


def flag_of(name: str) -> str:
    """The command-line flag of a setting: ``max_grad_norm`` -> ``--max-grad-norm``."""
    return "--" + name.replace("_", "-")


def check_positive(owner, *fields: str) -> None:
    """Refuse settings of ``owner`` (a core, task or other dataclass) that are not positive
    integers, naming the class and the field."""
    for name in fields:
        value = getattr(owner, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{type(owner).__name__}.{name} must be a positive integer, got {value!r}")


READ_AS_IT_IS = object()
"""the mark of a class while tyro's own rule reads its fields (``fields_read_by_tyro``)"""


def fields_read_by_tyro(info: StructTypeInfo) -> list[StructFieldSpec]:
    """The fields of ``info``'s class as tyro's own rule reads them: types, defaults (the default
    instance's) and help (the docstring under each field, ``plain_help``); none for a class tyro reads
    no fields of."""
    spec = ConstructorRegistry.get_struct_spec(dataclasses.replace(info, markers=(*info.markers, READ_AS_IT_IS)))
    fields = spec.fields if isinstance(spec, StructConstructorSpec) else ()
    return [dataclasses.replace(field, helptext=plain_help(field.helptext)) for field in fields]


def plain_help(helptext):
    """A field's help as the terminal shows it: memrl's docstrings mark code as reStructuredText
    literals (``x``), shown as plain x; tyro reads a docstring when the help is shown (a callable)."""
    if callable(helptext):
        return lambda: plain_help(helptext())
    return helptext.replace("``", "") if helptext else helptext


def settings_read_by_tyro(info: StructTypeInfo, hidden=()) -> list[StructFieldSpec]:
    """The settings of a component (``info``: its class and default instance) as tyro reads them: its
    fields, an environment's params' fields beside its own, less those ``hidden`` (what its name
    fixes, what the run gives) and those whose value a config record cannot hold or whose default is
    not of its type (Craftax's ``fractal_noise_angles``, four Nones of ``tuple[int, int, int, int]``)."""
    fields = fields_read_by_tyro(info)
    params = next((f for f in fields if f.name == "params" and dataclasses.is_dataclass(f.default)), None)
    if params is not None:  # an environment's numeric settings, flat beside its own
        fields = [f for f in fields if f is not params]
        fields += fields_read_by_tyro(StructTypeInfo.make(type(params.default), params.default, False))
    return [f for f in fields if f.name not in hidden and recordable(f.default) and of_type(f.default, f.type)]


@functools.cache  # a registered name's entry never changes
def settings_of(registry: Registry, name: str, by_the_run: tuple[str, ...] = ()) -> tuple[StructFieldSpec, ...]:
    """The settings of ``registry``'s entry ``name`` (``settings_read_by_tyro`` of its default) but
    those its name fixes and those the run gives (``by_the_run``); none for a family member's."""
    if registry.family(name):
        return ()
    made = registry.default(name)
    info = StructTypeInfo.make(type(made), made, False)
    return tuple(settings_read_by_tyro(info, (*registry.fixed(name), *by_the_run)))


def help_of(setting: StructFieldSpec) -> str:
    """What a setting means: the docstring under its field, as tyro reads it ("" where none)."""
    text = setting.helptext() if callable(setting.helptext) else setting.helptext
    return " ".join((text or "").split())


def described(registry: Registry, name: str) -> str:
    """The first paragraph of the docstring of the module that defines ``registry``'s entry ``name``:
    what it is and the paper it comes from."""
    doc = sys.modules[type(registry.default(name)).__module__].__doc__ or ""
    return " ".join(doc.strip().split("\n\n")[0].split()).replace("``", "`")  # reStructuredText's literals, as markdown
