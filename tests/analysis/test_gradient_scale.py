"""The gradient-scale diagnostic: the first gradient the learner's optimiser receives, per
parameter, beside the optimiser's floor (Adam's ε; the square root of TensorFlow-style RMSprop's)."""

import math

import jax.numpy as jnp
import pytest

from memrl import cores, envs
from memrl.analysis.gradient_scale import catch_first_gradient, gradient_scale, optimiser_floor
from memrl.learn.impala_config import ImpalaConfig
from memrl.learn.ppo_config import PPOConfig

SMALL = dict(env=envs.make("tmaze/T-L"), num_envs=4, rollout_len=16, num_minibatches=1, update_epochs=1)


def test_the_first_gradient_is_kept_and_passed_through():
    catch = catch_first_gradient()
    params = {"w": jnp.zeros(2)}
    state = catch.init(params)
    first, state = catch.update({"w": jnp.array([1.0, -2.0])}, state)
    _, state = catch.update({"w": jnp.array([5.0, 5.0])}, state)
    assert first["w"].tolist() == [1.0, -2.0] and state.gradient["w"].tolist() == [1.0, -2.0]


def test_the_floor_is_adams_eps_or_the_root_of_rmsprops():
    assert optimiser_floor(PPOConfig()) == ("Adam ε 1e-05", 1e-5)  # PPO's default
    assert optimiser_floor(ImpalaConfig())[1] == pytest.approx(math.sqrt(1e-4))  # inside the square root
    assert optimiser_floor(ImpalaConfig(optimizer="adam"))[1] == 1e-8


@pytest.mark.slow
def test_s6s_scan_parameters_sit_orders_of_magnitude_below_ppos_eps_where_the_lstms_do_not():
    """The defect issue 83 found: S6's A_log gets gradients near 1e-10 at init under PPO, five orders
    below PPO's Adam ε of 1e-5, so Adam moves it by about lr · 1e-5; on the same first batch the
    LSTM's smallest is within a factor of 10-100 of ε (1e-6 on T-L at init: flagged, and it learns)."""
    ratios = lambda core: {
        r["parameter"].split("/core/")[-1]: r["mean_abs_gradient"] / r["floor"]
        for r in gradient_scale(PPOConfig(core=core, **SMALL))
        if "/core/" in r["parameter"]
    }
    s6, lstm = ratios(cores.make("s6")), ratios(cores.make("lstm"))
    assert s6["A_log"] < 1e-3 and min(lstm.values()) > 1e-2
