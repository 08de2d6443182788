"""``--devices``: a run's environments split over several local devices equal the run on one
(XLA's CPU forced to 4 devices, in a subprocess: the device count is fixed when JAX starts)."""

import json
import os
import subprocess
import sys

import jax
import pytest

from memrl.learn.ppo_config import PPOConfig
from memrl.run.devices import check_devices

SCRIPT = """
import json, sys
from pathlib import Path
import jax
from memrl import cores, envs
from memrl.learn.ppo_config import PPOConfig
from memrl.run.folder import RunFolder
from memrl.run.seed_training import train_seeds

config = PPOConfig(env=envs.make("tmaze/T-LN", maze_length=4, timeout=10), core=cores.make("gru", hidden=8),
                   encoder_widths=(8,), head_widths=(8,), num_envs=8, rollout_len=8, num_minibatches=2, total_steps=8 * 8 * 3, updates_per_chunk=3)
metrics = {}
for devices in (1, 4):
    folder = RunFolder(Path(sys.argv[1]) / str(devices))
    folder.prepare(config)
    train_seeds(config, folder, [0], devices=devices)
    metrics[devices] = folder.read_metrics(0)
import numpy as np
from memrl.learn.learners import learner_for
from memrl.run.devices import shard_envs
runner = jax.tree.map(lambda x: np.stack([x]), learner_for(config).init(jax.random.PRNGKey(0)))
sharded = shard_envs(runner, 4)
leaf = lambda name: jax.tree.leaves(getattr(sharded, name))[0]
spread = {name: [len(leaf(name).sharding.device_set), leaf(name).sharding.is_fully_replicated] for name in ("obs", "carry", "params")}
print(json.dumps({"devices": jax.local_device_count(), "spread": spread, "metrics": metrics}))
"""


def test_four_devices_train_like_one(tmp_path):
    env = dict(
        os.environ, XLA_FLAGS=f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=4".strip()
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["devices"] == 4 and result["spread"] == {"obs": [4, False], "carry": [4, False], "params": [4, True]}
    one, four = result["metrics"]["1"], result["metrics"]["4"]
    assert len(one) == len(four) == 3
    for a, b in zip(one, four):
        for name in ("policy_loss", "value_loss", "entropy", "episode_return"):
            assert a[name] == pytest.approx(b[name], rel=1e-4, abs=1e-6), (name, a, b)


def test_device_counts_this_machine_lacks_are_refused():
    count = jax.local_device_count()
    for devices in (0, count + 1):
        with pytest.raises(
            ValueError, match=rf"--devices must lie in 1\.\.{count} \(the local \w+ devices\), got {devices}"
        ):
            check_devices(devices, PPOConfig())
