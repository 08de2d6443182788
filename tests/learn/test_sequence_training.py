"""Any memory on any sequence task: every registered core (in the sequence model) takes an update
on a token task, and every sequence task, vector inputs included, trains the sequence model, at tiny
sizes (a core sees only the embedded sequence [T, B, D], so which task it learns is not its
concern: one task per core and one core per task cover the pairs); and a run folder (chunks with
their held-out evaluation) resumes."""

import tempfile
from pathlib import Path

import jax
import numpy as np
import pytest
from conftest import SMALL_CORES

from memrl import tasks
from memrl.agents.supervised_models import registry_of
from memrl.learn.supervised import SupervisedLearner
from memrl.learn.supervised_config import SupervisedConfig

DEMONSTRATIONS = Path(tempfile.mkdtemp()) / "demonstrations.npz"
np.savez(
    DEMONSTRATIONS, observations=np.eye(3)[np.arange(24) % 3].reshape(8, 3, 3), actions=np.arange(24).reshape(8, 3) % 2
)
TINY_TASKS = {
    "copying": dict(gap=2, num_digits=3),
    "nth-farthest": dict(num_objects=3, num_features=2),
    "listops": dict(min_length=3, max_length=12, train_size=8, test_size=4),
    "learn-to-execute": dict(program="all", max_length=1, max_nesting=2, programs_per_level=8, test_programs=4),
    "language-model": dict(unroll=3),
    "digits": dict(patch_size=4, test_size=10),
    "babyai": dict(levels="GoToLocal", episodes=4, test_episodes=2, max_steps=12),
    "tmaze-returns": dict(maze_length=3, episodes=8, test_episodes=4),
    "demonstrations": dict(path=str(DEMONSTRATIONS), held_out_episodes=2),
}
NAMED_INPUTS = {"epn", "epn-nxk"}  # refused by the sequence model (test_supervised)
TASK_MODEL_TASKS = {"pai"}  # read only by a task model (htm-pai)


def tiny_config(task: str, core: str, **kwargs) -> SupervisedConfig:
    """One layer for the transformer cores (their layers are tested in tests/cores): one compile per pair stays short."""
    core_args = SMALL_CORES[core] | ({"num_layers": 1} if "num_layers" in SMALL_CORES[core] else {})
    return SupervisedConfig(
        task=tasks.make(task, **TINY_TASKS[task]),
        core=registry_of(core).make(core, **core_args),
        embed_dim=6,
        batch_size=4,
        total_steps=16,
        updates_per_chunk=2,
        **kwargs,
    )


def test_every_sequence_task_is_covered():
    assert sorted(TINY_TASKS) == sorted(set(tasks.names()) - TASK_MODEL_TASKS)


def takes_an_update(task: str, core: str):
    learner = SupervisedLearner(tiny_config(task, core))
    before = learner.init(jax.random.PRNGKey(0))
    state, metrics = jax.jit(learner.update)(before)
    assert np.isfinite(metrics["loss"]) and float(metrics["grad_norm"]) > 0 and int(metrics["sequences"]) == 4
    assert 0 <= float(metrics["accuracy"]) <= 1 and int(state.update) == 1
    moved = jax.tree.map(lambda a, b: bool(np.any(np.asarray(a) != np.asarray(b))), state.params, before.params)
    assert any(jax.tree.leaves(moved)), "the update changed the parameters"


@pytest.mark.parametrize("core", sorted(set(SMALL_CORES) - NAMED_INPUTS))
def test_every_core_trains_in_the_sequence_model(core):
    takes_an_update("copying", core)


@pytest.mark.parametrize("task", sorted(set(TINY_TASKS) - {"copying"}))
def test_every_task_trains_the_sequence_model(task):
    takes_an_update(task, "gru")


def test_the_tasks_cover_token_and_vector_inputs():
    assert [tasks.make(t).input_kind for t in ("copying", "nth-farthest")] == ["tokens", "vectors"]


@pytest.mark.parametrize("task", sorted(TINY_TASKS))
def test_an_interrupted_run_resumes_where_its_checkpoint_left_it(task, tmp_path):
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    config = tiny_config(task, "gru")
    folder = RunFolder(tmp_path)
    folder.prepare(config)
    stop = type("Stop", (Exception,), {})

    def interrupt(done):
        if done == 8:
            raise stop

    with pytest.raises(stop):
        train_seeds(config, folder, [0], on_chunk=interrupt)
    assert [r["sequences"] for r in folder.read_metrics(0)] == [4, 8]
    train_seeds(config, folder, [0])
    rows = folder.read_metrics(0)
    assert [r["sequences"] for r in rows] == [4, 8, 12, 16]
    assert [r["test_accuracy"] is not None for r in rows] == [False, True, False, True]
    assert folder.write_summary(config)["final_mean"] == rows[-1]["test_accuracy"]
