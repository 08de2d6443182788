"""The agent update profiles (HTM's image agents, the EPN and RMC agents) run and report what they say (no timing assertions)."""

from memrl import cores, envs
from memrl.bench.agent_updates import AGENT_PROFILES
from memrl.bench.htm_agents import PROFILED_RUNS
from memrl.bench.update_cost import update_cost
from memrl.experiments import get
from memrl.learn.impala_config import ImpalaConfig
from memrl.registry import held_settings


def test_update_cost_measures_an_update_and_its_parts():
    config = ImpalaConfig(
        env=envs.make("pvm", **dict(room_size=4, num_choices=2, steps_per_second=1)),
        core=cores.make(
            "htm", **dict(num_layers=1, d_model=8, num_heads=2, mlp_dim=8, window=4, chunk_size=4, num_chunks=11, k=2)
        ),
        encoder="conv",
        encoder_widths=(),
        conv_channels=(4, 4),
        conv_kernels=(1, 3),
        conv_strides=(1, 1),
        head_widths=(8,),
        reconstruction_coef=1.0,
        num_envs=2,
        rollout_len=8,
        total_steps=16,
    )
    cost = update_cost(config, repeats=1)
    assert cost.steps == 16 and min(cost.update_s, cost.acting_s, cost.gradient_s) > 0


def test_the_profiled_runs_are_the_experiments_image_agents_with_reconstruction():
    for experiment, run in PROFILED_RUNS:
        config = get(experiment, "cpu").runs[run]
        assert config.encoder == "conv" and config.reconstruction_coef == 1.0 and config.learner == "impala"


def test_the_epn_and_rmc_profiles_are_the_experiments_cpu_agents_beside_an_lstm():
    for name, core in (("epn", "epn"), ("rmc", "rmc")):
        profile = AGENT_PROFILES[name]
        runs = get(profile.experiment, "cpu").runs
        cores = {runs[run].core_name for run in profile.runs}
        assert cores == {core, "lstm"} and all(runs[run].learner == "impala" for run in profile.runs)


def test_the_epn_profile_averages_one_whole_episode():
    """EPN's planner costs more as an episode's memory fills: its figures average an episode's updates."""
    profile = AGENT_PROFILES["epn"]
    for run in profile.runs:
        config = get(profile.experiment, "cpu").runs[run]
        assert profile.updates * config.rollout_len == 100 == held_settings(config.core).get("capacity", 100)
