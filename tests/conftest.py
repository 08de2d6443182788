import multiprocessing
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Most tests compile far more than they run: without LLVM's optimisation passes the suite's compiles
# take about a third less time. Long training loops run 2-3x slower so, though: those run in
# `optimised`. Set before jax starts its backend; a process started by `optimised` keeps the passes.
UNOPTIMISED = "--xla_backend_optimization_level=0"
# XLA's CPU fusion emitters (its MLIR code generator) compile these small programs about twice as
# slowly as its classic ones (the core contract tests: 154 s -> 79 s on one core, 2026-12-02): every
# test process, the optimised ones too, uses the classic ones. Their code runs slower (a real
# training run: 51 s against 31 s), so memrl itself keeps XLA's default (docs/cli.md).
CLASSIC_EMITTERS = "--xla_cpu_use_fusion_emitters=false"
if CLASSIC_EMITTERS not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), CLASSIC_EMITTERS]).strip()
if not os.environ.get("MEMRL_TEST_OPTIMISED"):
    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), UNOPTIMISED]).strip()


# Tests compile the same program many times (a model at test sizes in several tests, a run and its
# resume, the CLI's worker processes): JAX's disk cache, one folder per test session, compiles each
# once. The controller makes the folder; xdist workers and every process they start inherit it.
if "MEMRL_TEST_JAX_CACHE" not in os.environ:
    os.environ["MEMRL_TEST_JAX_CACHE"] = tempfile.mkdtemp(prefix="memrl-test-xla-")
    _owns_jax_cache = True
else:
    _owns_jax_cache = False
os.environ.update(
    JAX_COMPILATION_CACHE_DIR=os.environ["MEMRL_TEST_JAX_CACHE"], JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0.1"
)


_optimised_pool = None  # one process per xdist worker, started on first use: imports once


def pin_xdist_worker() -> None:
    """Each xdist worker (and the processes it starts) on a core of its own, where there are enough:
    unpinned, two workers' XLA thread pools contend for both cores of a 2-core machine."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER"), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if not worker or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    if count <= len(cores):
        os.sched_setaffinity(0, {cores[int(worker.removeprefix("gw")) % len(cores)]})


pin_xdist_worker()


def optimised(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a process whose XLA keeps its optimisation passes: for the
    learning checks, whose run time is their cost. ``fn`` and its arguments must pickle (a function
    of a module, not a lambda)."""
    global _optimised_pool
    if _optimised_pool is None:
        flags = os.environ["XLA_FLAGS"]
        os.environ.update(XLA_FLAGS=flags.replace(UNOPTIMISED, "").strip(), MEMRL_TEST_OPTIMISED="1")
        try:  # the process starts with this environment
            _optimised_pool = multiprocessing.get_context("spawn").Pool(1)
        finally:
            os.environ["XLA_FLAGS"] = flags
            del os.environ["MEMRL_TEST_OPTIMISED"]
    return _optimised_pool.apply(fn, args, kwargs)


def pytest_collection_modifyitems(items):
    """The learning checks (``slow``) first: xdist hands tests out in this order, so the long ones
    start early and the workers finish together instead of one waiting on a late check."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_sessionfinish(session):
    if _optimised_pool is not None:  # closed here: left to the interpreter's exit it complains
        _optimised_pool.terminate()
        _optimised_pool.join()


def pytest_unconfigure(config):
    if _owns_jax_cache:
        shutil.rmtree(os.environ["MEMRL_TEST_JAX_CACHE"], ignore_errors=True)


DATA = Path(__file__).parent / "data"
TINY_PPO = dict(encoder_widths=(8,), head_widths=(8,), num_envs=4, rollout_len=8, total_steps=64)
"""the agent and batch of ``tiny_ppo``"""


def tiny_ppo(maze: str = "tmaze/T-LN", core: str = "gru", **fields):
    """A PPO run of ``core`` (hidden 8) on a 4-cell ``maze`` that trains in seconds (`from conftest import tiny_ppo`)."""
    from memrl import cores, envs
    from memrl.learn.ppo_config import PPOConfig

    made = dict(env=envs.make(maze, maze_length=4, timeout=10), core=cores.make(core, hidden=8))
    return PPOConfig(**{**made, **TINY_PPO, **fields})


D = 6  # input width of the core contract tests
SMALL_CORES = {  # every registered core at test sizes (`from conftest import SMALL_CORES`)
    "lstm": dict(hidden=16),
    "lstm-stack": dict(hidden=16),
    "gru": dict(hidden=16),
    "amrl-max": dict(hidden=16),
    "amrl-avg": dict(hidden=16),
    "amrl-sum": dict(hidden=16),
    "set": dict(features=D),
    "trxl": dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, memory_length=4),
    "gtrxl": dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, memory_length=4),
    "trxl-topk": dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, memory_length=4, top_k=2),
    "epn": dict(
        capacity=24, embed_dim=8, width=16, num_heads=2, prefixes=2
    ),  # two prefixes: the switch at half the compile
    "epn-nxk": dict(capacity=24, embed_dim=8, width=16, num_heads=2, k=3, prefixes=2),
    "conv-lstm": dict(grid=1, channels=8, kernel=2),
    "rmc": dict(mem_slots=2, head_size=4, num_heads=2, num_blocks=2),
    "dnc": dict(memory_size=6, word_size=4, num_reads=2, num_writes=1, hidden=16, output_size=16),
    "htm": dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, window=3, chunk_size=2, num_chunks=4, k=2),
    "tlb": dict(chunk_size=3, num_state=2, d_model=16, num_heads=2, mlp_dim=16),
    "transformer": dict(chunk_size=4, d_model=16, num_heads=2, mlp_dim=16),
    "feedback-transformer": dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, memory_length=4),
    "lru": dict(hidden=8, state=6),
    "s6": dict(hidden=8, channels=8, state=4),
    "linear-attention": dict(hidden=8, num_heads=2, head_size=4),
    "min-gru": dict(hidden=8),
    "ffm": dict(hidden=8, trace=4, context=2),
    "delta-net": dict(hidden=8, num_heads=2, head_size=4),
    "gated-delta-net": dict(hidden=8, num_heads=2, head_size=4),
    "mlstm": dict(hidden=8, num_heads=2, head_size=4),
    "s5": dict(hidden=8, state=4, blocks=2),
    "memoryless": dict(hidden=8),
}


LEARNING_SEEDS = 3
"""a learning check holds on every one of this many seeds (trained in one program, vmapped)"""


def trained_over_seeds(config, seeds: int = LEARNING_SEEDS):
    """The parameters and metrics of ``make_train(config)`` run on ``seeds`` seeds at once (keys
    ``split(PRNGKey(0), seeds)``, the seeds vmapped in one compiled program, in the ``optimised``
    process), each with a leading seed axis."""
    return optimised(train_over_seeds, config, seeds)


def train_over_seeds(config, seeds: int):
    """``trained_over_seeds``' work, in the process that runs it (its results as NumPy arrays)."""
    import jax

    from memrl.learn.learners import make_train

    runners, metrics = jax.jit(jax.vmap(make_train(config)))(jax.random.split(jax.random.PRNGKey(0), seeds))
    return jax.device_get((runners.params, metrics))


def final_returns(metrics, last: int = 10):
    """Each seed's mean episode return over its last ``last`` updates ([seeds], from
    ``trained_over_seeds``' metrics)."""
    import numpy as np

    return np.nanmean(np.asarray(metrics["episode_return"])[:, -last:], axis=1)


def trained_scores(config, updates: int, evaluated: int = 1000, seeds: int = LEARNING_SEEDS) -> dict:
    """Held-out scores of a supervised ``config``'s model after ``updates`` updates, each score an
    array over ``seeds`` seeds (keys ``split(PRNGKey(0), seeds)``, trained in one program, vmapped;
    pass it to ``optimised``)."""
    import jax
    import numpy as np

    from memrl.learn.supervised import SupervisedLearner

    learner = SupervisedLearner(config)
    params = supervised_params_over_seeds(learner, updates, seeds)
    scores = jax.jit(jax.vmap(lambda p: learner.evaluate(p, jax.random.PRNGKey(1), evaluated)))(params)
    return {k: np.asarray(v) for k, v in scores.items()}


def supervised_params_over_seeds(learner, updates: int, seeds: int = LEARNING_SEEDS):
    """The parameters of a ``SupervisedLearner`` after ``updates`` updates from each of ``seeds`` seeds
    (keys ``split(PRNGKey(0), seeds)``), trained in one vmapped program, with a leading seed axis."""
    import jax

    train = jax.vmap(lambda key: learner.run(learner.init(key), updates)[0].params)
    return jax.jit(train)(jax.random.split(jax.random.PRNGKey(0), seeds))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA
