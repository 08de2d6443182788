"""The settings of a registered core, environment or task: each dataclass field of what the
registry makes by default (and, for an environment, of its params), with its type, default and the
docstring written under it; the check of settings given by name (``--core-args``, ``--env-args``,
``--task-args``) against them, names and types, before anything is built; and the types of
command options that carry their allowed range (``Count``, ``Seed``, ``LearningRate``,
``OutputFolder``), which the command line checks by type, whatever an option is called."""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import math
import sys
import textwrap
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NamedTuple

from memrl.registry import LINEN_FIELDS, Registry


class Allowed(NamedTuple):
    """What a command option of this type may be: ``what`` says it, ``fits`` tests a value."""

    what: str
    fits: Callable[[Any], bool]


Count = Annotated[int, Allowed("a positive integer", lambda value: value >= 1)]
"""an option that counts something: at least 1"""
Seed = Annotated[int, Allowed(">= 0", lambda value: value >= 0)]
"""a random seed: at least 0"""
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


@dataclasses.dataclass(frozen=True)
class Setting:
    """One setting: its name, type, default and the docstring under its field."""

    name: str
    hint: Any  # the field's type (a string when it cannot be resolved)
    default: Any
    doc: str

    @property
    def type_name(self) -> str:
        return (
            self.hint
            if isinstance(self.hint, str)
            else str(self.hint).replace("typing.", "").replace("<class '", "").replace("'>", "")
        )


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """The docstrings written under the fields of ``cls`` and its bases (``field: T = v`` then
    ``\"\"\"doc\"\"\"``); parsed once per class (every config checks its settings against them)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for statement, following in zip(body, body[1:]):
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                if (
                    isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)
                ):
                    docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def dataclass_settings(instance) -> list[Setting]:
    """The init fields of a dataclass instance, with the instance's values as defaults."""
    cls = type(instance)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that names what this module cannot import: keep the text
        hints = {}
    docs = field_docs(cls)
    return [
        Setting(f.name, hints.get(f.name, f.type), getattr(instance, f.name), docs.get(f.name, ""))
        for f in dataclasses.fields(cls)
        if f.init and f.name not in LINEN_FIELDS
    ]


def described(registry: Registry, name: str) -> str:
    """The first paragraph of the docstring of the module that defines ``registry``'s entry ``name``:
    what it is and the paper it comes from."""
    doc = sys.modules[type(registry.default(name)).__module__].__doc__ or ""
    return " ".join(doc.strip().split("\n\n")[0].split()).replace("``", "`")  # reStructuredText's literals, as markdown


@functools.cache  # a registered name's entry never changes; making every environment takes a second
def settings_of(registry: Registry, name: str) -> tuple[Setting, ...]:
    """Every setting of ``registry``'s entry ``name`` but those its name fixes: its fields, then
    (environments) its params' fields."""
    made = registry.default(name)
    own = dataclass_settings(made) if dataclasses.is_dataclass(made) else []  # an adapter (gymnax) has only params
    params = getattr(made, "default_params", None)
    if dataclasses.is_dataclass(params):  # the params field is set by its fields
        own = [s for s in own if s.default is not params] + dataclass_settings(params)
    fixed = registry.fixed(name)
    return tuple(s for s in own if s.name not in fixed)


def fits(value, hint) -> bool:
    """Whether a setting's ``value`` (int, float, bool, str, None, or a tuple of them) fits the type
    ``hint``: ``tuple[T, ...]`` and ``tuple[T1, T2]`` element by element."""
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, option) for option in typing.get_args(hint))
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(fits(v, args[0]) for v in value)
        return not args or (len(args) == len(value) and all(map(fits, value, args)))
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if hint is type(None):
        return value is None
    return True  # arrays, pytrees: the entry checks them itself


def check_settings(registry: Registry, name: str, given: dict, where: str = "") -> None:
    """Refuse settings that ``name`` does not have or whose values do not fit their types, naming
    the setting, the type and what is allowed (``memrl list`` shows them); ``where`` says where they
    were given ("--stages ...")."""
    if not given or registry.family(name):  # a family member's settings are its own (gymnasium.make checks them)
        return
    at = f" ({where})" if where else ""
    registry.refuse_unknown(name, given, at)
    known = {s.name: s for s in settings_of(registry, name)}
    for key, value in given.items():
        if not fits(value, known[key].hint):
            raise ValueError(
                f"{registry.kind} {name!r} setting {key!r} must be {known[key].type_name}, got {value!r}{at}"
            )
