"""The model a supervised run trains: the shared sequence model around a registered core, or a
model that a paper defines for one task instead (HTM's PAI reader, App. B.4), registered here.

A supervised run names either in its ``core`` setting. A task model maps the task's batch inputs
to logits [T, B, outputs] as the sequence model does, and lists the tasks it reads in ``tasks``.
"""

from __future__ import annotations

from memrl import cores
from memrl.agents.associative_inference import HTMAssociativeInference
from memrl.agents.sequence_model import SequenceModel
from memrl.registry import Registry

TASK_MODELS: Registry = Registry("task model")
TASK_MODELS.register("htm-pai", HTMAssociativeInference)

SEQUENCE_MODEL_DEFAULTS = {"embed_dim": 64, "head_widths": ()}


def model_names() -> list[str]:
    """Every name a supervised run's ``core`` may take: the cores, then the task models."""
    return cores.names() + TASK_MODELS.names()


def make_model(core: str, core_args: dict, task_name: str, task, embed_dim: int = 64, head_widths: tuple[int, ...] = ()):
    """The model for ``task`` (registered as ``task_name``): the task model ``core`` (with
    ``core_args`` its settings), or the sequence model around the registered core ``core`` (with
    ``embed_dim`` and ``head_widths``)."""
    if core in TASK_MODELS.names():
        if (embed_dim, tuple(head_widths)) != tuple(SEQUENCE_MODEL_DEFAULTS.values()):
            raise ValueError(f"embed_dim and head_widths set the sequence model; the task model {core!r} has its own sizes (--core-args)")
        model = TASK_MODELS.make(core, **core_args)
        if task_name not in model.tasks:
            raise ValueError(f"task model {core!r} reads only the task(s) {', '.join(model.tasks)}, not {task_name!r}")
        return model
    if core not in cores.names():
        raise ValueError(f"unknown core {core!r}; cores: {', '.join(cores.names())}; task models: {', '.join(TASK_MODELS.names())}")
    if task.input_kind not in ("tokens", "vectors"):
        raise ValueError(
            f"the sequence model (core {core!r}) reads token or vector sequences; task {task_name!r}'s inputs are "
            f"{task.input_kind!r}: train it with a task model ({', '.join(TASK_MODELS.names())})"
        )
    return SequenceModel(cores.make(core, **core_args), task.input_kind, task.input_size, task.num_outputs, embed_dim, tuple(head_widths))

