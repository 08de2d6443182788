"""The model a supervised run trains: the shared sequence model around a registered core, or a
model that a paper defines for one task instead (HTM's PAI reader, App. B.4), registered here.

A supervised run names either in its ``core`` setting. A task model maps the task's batch inputs
to logits [T, B, outputs] as the sequence model does, and lists the tasks it reads in ``tasks``.
"""

from __future__ import annotations

from memrl import cores
from memrl.agents.associative_inference import HTMAssociativeInference
from memrl.agents.sequence_model import SEQUENCE_INPUT_KINDS, SequenceModel
from memrl.registry import ComponentRegistry

TASK_MODELS: ComponentRegistry = ComponentRegistry("task model")
TASK_MODELS.register("htm-pai", HTMAssociativeInference)


def registry_of(name: str) -> ComponentRegistry:
    """The registry that ``name`` names an entry of: the task models', else the cores'."""
    return TASK_MODELS if name in TASK_MODELS.names() else cores.CORES


def make_model(
    core,
    task_name: str,
    task,
    embed_dim: int,
    head_widths: tuple[int, ...],
    readout: str = "steps",
    unroll_length: int = 0,
):
    """The model for ``task`` (registered as ``task_name``): ``core`` itself where it is a task
    model, or the sequence model around the memory core ``core`` (with ``embed_dim``,
    ``head_widths``, ``readout`` and ``unroll_length``, which a task model does not use)."""
    if TASK_MODELS.makes(core):
        if task_name not in core.tasks:
            name = TASK_MODELS.name_of(core)[0]
            raise ValueError(f"task model {name!r} reads only the task(s) {', '.join(core.tasks)}, not {task_name!r}")
        return core
    if task.input_kind not in SEQUENCE_INPUT_KINDS:
        raise ValueError(
            f"the sequence model (core {cores.CORES.name_of(core)[0]!r}) reads token or vector sequences; task {task_name!r}'s inputs are "
            f"{task.input_kind!r}: train it with a task model ({', '.join(TASK_MODELS.names())})"
        )
    if readout == "state" and not task.scored_at_final_step:
        raise ValueError(
            f'readout "state" answers once, from the final state; task {task_name!r} is scored at other steps too'
        )
    return SequenceModel(
        core,
        task.input_kind,
        task.input_size,
        task.num_outputs,
        embed_dim,
        tuple(head_widths),
        readout,
        unroll_length,
    )
