"""Experiments: the registered reproductions are well formed, and the runner writes its outputs."""

import collections
import dataclasses
import importlib.util
import json
import math
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from conftest import tiny_ppo
from scipy import stats

from memrl import cores, envs, experiments, tasks
from memrl.envs.base import ENVS
from memrl.experiments.base import MIN_EPISODES, Expectation, Experiment
from memrl.experiments.record import check_record
from memrl.learn.learners import learner_for
from memrl.learn.ppo_config import PPOConfig
from memrl.registry import held_settings


@pytest.mark.parametrize("preset", ["cpu", "paper"])
def test_amrl_tmaze_covers_the_issue(preset):
    experiment = experiments.get("amrl-tmaze", preset)
    assert set(experiment.panels()) == {"T-L", "T-LN", "T-LS"} and experiment.preset == preset
    for runs in experiment.panels().values():
        assert sorted(r.split("/")[1] for r in runs) == sorted(
            ["amrl-max", "amrl-avg", "set", "lstm", "lstm-stack", "gru"]
        )
    assert all(c.seeds == (3 if preset == "cpu" else 5) for c in experiment.runs.values())
    central_t_l = {
        e.run
        for e in experiment.expectations
        if e.run.startswith("T-L/") and e.central and e.evaluated == ("solving", "solved")
    }
    assert central_t_l == set(experiment.panels()["T-L"])  # every model must solve T-L in every seed
    central_t_ln = {
        (e.run, e.op, e.threshold) for e in experiment.expectations if e.run.startswith("T-LN/") and e.central
    }
    assert central_t_ln == {
        ("T-LN/amrl-max", ">=", 1.0),
        ("T-LN/amrl-avg", ">=", 1.0),
        ("T-LN/lstm", "<=", 0.0),
        ("T-LN/lstm-stack", "<=", 0.0),
    }
    assert all(
        e.evaluated == ("solving", "solved") for e in experiment.expectations if e.run.startswith("T-LN/") and e.central
    )
    assert all(
        e.run in experiment.runs and (not e.against or e.against in experiment.runs) for e in experiment.expectations
    )
    compared = {(e.run, e.against) for e in experiment.expectations if e.against}
    solvers = ["amrl-max"] + (["amrl-avg"] if preset == "paper" else [])
    assert compared == {(f"T-LS/{a}", f"T-LS/{b}") for a in solvers for b in ("lstm", "lstm-stack")}
    # every model, in both presets, with AMRL's own PPO batching and one learning rate
    assert all(
        (c.steps_per_update, c.minibatch_steps, c.update_epochs, c.gamma, c.lr) == (4000, 200, 30, 0.98, 5e-4)
        for c in experiment.runs.values()
    )
    assert all(c.total_steps == 250_000 for c in experiment.runs.values()) == (preset == "paper")
    json.dumps(experiment.describe())


def test_amrl_tmaze_adds_the_dnc_with_amrls_sizes():
    plain, with_dnc = experiments.get("amrl-tmaze", "cpu"), experiments.get("amrl-tmaze", "cpu", ("dnc",))
    assert set(with_dnc.runs) - set(plain.runs) == {"T-L/dnc", "T-LN/dnc", "T-LS/dnc"}
    dnc = with_dnc.runs["T-LN/dnc"]
    assert dnc.core == cores.make(
        "dnc", memory_size=16, word_size=16, num_reads=4, num_writes=1, hidden=256, output_size=256
    )
    assert dataclasses.replace(dnc, core=cores.make("lstm")) == plain.runs["T-LN/lstm"]  # the LSTM's settings otherwise
    assert with_dnc.expectations == plain.expectations


def test_rmc_nth_farthest_is_the_papers_comparison():
    for preset, size in (("cpu", dict(num_objects=3, num_features=2)), ("paper", dict(num_objects=8, num_features=16))):
        experiment = experiments.get("rmc-nth-farthest", preset)
        assert sorted(experiment.runs) == [
            "nth farthest/dnc",
            "nth farthest/dnc split init",
            "nth farthest/lstm",
            "nth farthest/lstm split init",
            "nth farthest/rmc",
        ]
        for config in experiment.runs.values():
            assert config.task_name == "nth-farthest" and all(getattr(config.task, k) == v for k, v in size.items())
            assert config.head_widths == (256, 256, 256, 256) and config.max_grad_norm is None and config.seeds == 3
        assert experiment.runs["nth farthest/lstm split init"].core.weight_init == "split"
        assert (
            "weight_init" not in cores.CORES.name_of(experiment.runs["nth farthest/lstm"].core)[1]
        )  # the paper's (sonnet's) LSTM
        split_dnc = experiment.runs["nth farthest/dnc split init"].core
        assert (
            split_dnc.controller_weight_init == "split"
            and split_dnc.clone(controller_weight_init="fused") == experiment.runs["nth farthest/dnc"].core
        )
        # the claim is decided against every baseline, the stronger variants included
        beaten = {e.against for e in experiment.expectations if e.central and e.against}
        assert beaten == {f"nth farthest/{b}" for b in ("lstm", "lstm split init", "dnc", "dnc split init")}
        assert all(e.run in experiment.runs for e in experiment.expectations)
        assert all(
            e.evaluated == ("held_out", "accuracy_beyond_rank0") for e in experiment.expectations
        )  # rank 0 needs no memory
        n = size["num_objects"]
        bounds = {e.run: e.threshold for e in experiment.expectations if e.op == "<="}
        # the shortcut 2/N and slack overall, restated above rank 0: a model right on every rank 0 with overall a has (a - 1/N) N/(N-1)
        assert bounds["nth farthest/lstm"] == pytest.approx((2 / n + 0.1 - 1 / n) * n / (n - 1))
        learning = [e for e in experiment.expectations if e.learning]
        assert [(e.run, e.threshold) for e in learning] == [("nth farthest/rmc", pytest.approx(1 / (n - 1)))]
    assert bounds["nth farthest/dnc"] == pytest.approx((0.35 - 1 / 8) * 8 / 7)  # the paper's "below 30%" at 8 objects
    paper = experiments.get("rmc-nth-farthest", "paper").runs
    assert all((c.batch_size, c.lr) == (1600, 1e-4) for c in paper.values())
    rmc = held_settings(paper["nth farthest/rmc"].core)
    assert rmc["mem_slots"] * rmc["head_size"] * rmc["num_heads"] == 2048  # A.1's total units
    assert paper["nth farthest/dnc"].core.controller_layers == 2


def test_rmc_boxworld_is_the_papers_agent_and_counts_solved_levels(tmp_path, monkeypatch):
    from memrl.experiments import rmc_boxworld
    from memrl.experiments.rmc_boxworld import evaluate_solved
    from memrl.run.folder import RunFolder

    for preset in ("cpu", "paper"):
        runs = experiments.get("rmc-boxworld", preset).runs
        assert sorted(runs) == ["boxworld/conv-lstm", "boxworld/rmc"]
        for config in runs.values():
            assert (config.env_name, config.num_envs, config.rollout_len, config.entropy_coef, config.gamma) == (
                "boxworld/viewport",
                32,
                40,
                0.005,
                0.99,
            )
            assert (config.conv_channels, config.conv_kernels, config.conv_coordinates) == ((12, 24), (2, 2), True)
        rmc = held_settings(runs["boxworld/rmc"].core)
        assert rmc["mem_slots"] * rmc["num_heads"] * rmc["head_size"] == 1024 and rmc["gate_style"] == "memory"
    assert experiments.get("rmc-boxworld", "paper").runs["boxworld/rmc"].total_steps == 1_000_000_000
    config = experiments.get("rmc-boxworld", "cpu").runs["boxworld/rmc"]
    config = dataclasses.replace(
        config,
        env=ENVS.changed(config.env, max_steps=20),
        core=config.core.clone(mem_slots=2, num_heads=1, head_size=4),
        num_envs=4,
        total_steps=4 * 40,
        seeds=1,
    )
    folder = RunFolder(tmp_path / "boxworld/rmc")
    folder.prepare(config)
    folder.save_checkpoint(
        0, learner_for(config).init(jax.random.PRNGKey(0))
    )  # an untrained agent is enough to count levels
    monkeypatch.setattr(rmc_boxworld, "TEST_STEPS", 30)  # past the 20-step limit: every environment finishes a level
    solved = evaluate_solved({"boxworld/rmc": folder}, tmp_path)["solved"]["boxworld/rmc"]
    fraction = solved["fraction_solved"]
    assert solved["levels"] == fraction["episodes"] > 0 and 0.0 <= fraction["correct"] <= 1.0


def test_rmc_lte_covers_table_1_and_the_cpu_preset_its_program_evaluation():
    panels = {"paper": {"addition", "control", "full program", "copy", "reverse", "double"}, "cpu": {"full program"}}
    for preset in ("cpu", "paper"):
        experiment = experiments.get("rmc-lte", preset)
        assert set(experiment.panels()) == panels[preset]
        for run, config in experiment.runs.items():
            memorisation = run.split("/")[0] in ("copy", "reverse", "double")
            level = (5, 1 if memorisation else 2) if preset == "paper" else (2, 1)
            assert (config.task.max_length, config.task.max_nesting) == level and config.task.curriculum == "mix"
            assert (
                config.head_widths == (256, 256, 256, 256)
                and config.core_name in ("rmc", "lstm-stack")
                and config.batch_size == 128
            )
        assert {(e.run, e.against) for e in experiment.expectations if e.central} == {
            (f"{p}/rmc", f"{p}/lstm") for p in experiment.panels()
        }
        assert {e.run for e in experiment.expectations if e.learning} == {f"{p}/rmc" for p in experiment.panels()}
    paper = experiments.get("rmc-lte", "paper").runs["full program/rmc"]
    assert (paper.batch_size, paper.lr, paper.num_updates, paper.task.program) == (128, 1e-3, 200_000, "all")
    cpu = experiments.get("rmc-lte", "cpu").runs["full program/lstm"]
    assert (cpu.num_updates, cpu.seeds, cpu.max_grad_norm) == (3_000, 3, None)
    smallest_rmc = {
        k: held_settings(experiments.get("rmc-lte", "paper").runs["full program/rmc"].core)[k]
        for k in ("mem_slots", "num_heads", "head_size")
    }
    assert (
        {k: held_settings(experiments.get("rmc-lte", "cpu").runs["full program/rmc"].core)[k] for k in smallest_rmc}
        == smallest_rmc
        == dict(mem_slots=4, num_heads=4, head_size=64)
    )


def test_rmc_language_model_compares_models_of_equal_size_and_reads_fig_12():

    from memrl.experiments.rmc_language_model import parameter_count, perplexities
    from memrl.learn.supervised import SupervisedLearner

    for preset in ("cpu", "paper"):
        runs = experiments.get("rmc-language-model", preset).runs
        assert sorted(runs) == ["python-docs/lstm", "python-docs/rmc"]
        assert all(c.task.unroll == 100 and c.max_grad_norm == 0.1 and c.lr == 1e-3 for c in runs.values())
    cpu = experiments.get("rmc-language-model", "cpu").runs
    rmc, lstm = parameter_count(cpu["python-docs/rmc"]), parameter_count(cpu["python-docs/lstm"])
    assert abs(rmc - lstm) < 0.1 * rmc  # "at equal parameters"
    tiny = dataclasses.replace(
        cpu["python-docs/rmc"],
        core=cpu["python-docs/rmc"].core.clone(mem_slots=1, num_heads=1, head_size=4),
        embed_dim=4,
    )
    learner = SupervisedLearner(tiny)
    result = perplexities(learner, learner.init(jax.random.PRNGKey(0)).params, words=60, unrolls=(1, 60))
    assert result["unroll"]["60"] == pytest.approx(
        result["continuous"], rel=1e-5
    )  # one reset at the start: the continuous read
    assert result["unroll"]["1"] != pytest.approx(
        result["continuous"], rel=1e-3
    )  # a reset at every word forgets the context


def test_the_language_model_is_tested_at_its_checkpoint_of_lowest_validation_perplexity(tmp_path):
    """Issue 82 §9: every kept checkpoint is read on the validation split, the lowest is tested."""
    from memrl.experiments.rmc_language_model import chosen_checkpoint, evaluate_perplexity, perplexities, stream_loss
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    for preset in ("cpu", "paper"):
        assert all(c.keep_every > 0 for c in experiments.get("rmc-language-model", preset).runs.values())
    config = dataclasses.replace(
        experiments.get("rmc-language-model", "cpu").runs["python-docs/lstm"],
        core=cores.make("lstm", hidden=4),
        embed_dim=4,
        batch_size=2,
        total_steps=2 * 6,
        updates_per_chunk=2,
        keep_every=2,
        lr=0.3,
        seeds=1,
    )
    folder = RunFolder(tmp_path / "python-docs/lstm")
    folder.prepare(config)
    train_seeds(config, folder, [0])
    learner = learner_for(config)
    assert sorted(folder.kept_params(0, learner.init(jax.random.PRNGKey(0)).params)) == [2, 4, 6]
    # the last kept parameters made the first's, so that the lowest is not simply the last
    folder.kept_params_path(0, 6).write_bytes(folder.kept_params_path(0, 2).read_bytes())
    kept = folder.kept_params(0, learner.init(jax.random.PRNGKey(0)).params)
    loss = stream_loss(learner)
    valid = {
        u: perplexities(learner, p, words=300, unrolls=(), split="valid", loss=loss)["continuous"]
        for u, p in kept.items()
    }
    assert valid[2] == valid[6] != valid[4]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("memrl.experiments.rmc_language_model.TEST_WORDS", 300)
        update, params, perplexity = chosen_checkpoint(folder, 0, learner, loss)
        assert update == min(valid, key=valid.get) == 4 and perplexity == pytest.approx(valid[4], rel=1e-6)
        row = evaluate_perplexity({"python-docs/lstm": folder}, tmp_path)["perplexity"]["python-docs/lstm"]
    assert row["chosen_update"] == [update] and row["valid"]["per_seed"] == [pytest.approx(perplexity, rel=1e-6)]
    with pytest.raises(ValueError, match=r"keep_every \(3\) must be a multiple of updates_per_chunk \(2\)"):
        dataclasses.replace(config, keep_every=3)


def test_the_language_models_learning_level_is_the_unigram_models_perplexity():
    from memrl.experiments.rmc_language_model import unigram_perplexity

    task = experiments.get("rmc-language-model", "cpu").runs["python-docs/rmc"].task
    train, test = task.stream("train"), task.stream("test")[1:1001]
    counts = collections.Counter(train.tolist())
    total = len(train) + task.num_outputs
    by_hand = math.exp(-sum(math.log((counts[w] + 1) / total) for w in test.tolist()) / len(test))
    assert unigram_perplexity(task, words=1000) == pytest.approx(by_hand, rel=1e-9)


def test_rmc_pacman_compares_rmc_and_lstm_in_both_views_on_a_gpu_and_the_viewport_on_the_cpu():
    for preset, views in (("paper", ("full", "viewport")), ("cpu", ("viewport",))):
        experiment = experiments.get("rmc-pacman", preset)
        assert sorted(experiment.runs) == [f"{view}/{model}" for view in views for model in ("lstm", "rmc")]
        assert all(
            config.env_name == f"minipacman/{run.split('/')[0]}" and config.seeds == 3
            for run, config in experiment.runs.items()
        )
        assert {(e.run, e.against) for e in experiment.expectations if not e.learning} == {
            (f"{view}/rmc", f"{view}/lstm") for view in views
        }


def test_amrl_tmaze_counts_the_seeds_that_solve_t_ls_and_when(tmp_path):
    from memrl.experiments.amrl_tmaze import evaluate_solving
    from memrl.run.folder import RunFolder

    config = experiments.get("amrl-tmaze", "cpu").runs["T-LS/lstm"]
    folder = RunFolder(tmp_path / "T-LS/lstm")
    folder.prepare(config)
    budget = config.num_updates * config.steps_per_update
    folder.append_metrics(0, [{"env_steps": 10240, "episode_return": 13.6}])
    folder.append_metrics(
        1, [{"env_steps": 10240, "episode_return": float("nan")}, {"env_steps": 20480, "episode_return": 13.4}]
    )
    folder.append_metrics(
        2, [{"env_steps": 10240, "episode_return": 10.0}, {"env_steps": 20480, "episode_return": 13.9}]
    )
    solving = evaluate_solving({"T-LS/lstm": folder}, tmp_path)["solving"]["T-LS/lstm"]
    assert solving["first_step_per_seed"] == {"0": 10240, "1": None, "2": 20480} and solving["seeds_solved"] == 2
    assert solving["mean_steps_to_solve"] == pytest.approx((10240 + budget + 20480) / 3)
    assert solving["solved"]["per_seed"] == [1.0, 0.0, 1.0] and solving["steps_to_solve"]["per_seed"] == [
        10240,
        budget,
        20480,
    ]
    t_l = RunFolder(tmp_path / "T-L/lstm")  # T-L's level is 3.5
    t_l.prepare(experiments.get("amrl-tmaze", "cpu").runs["T-L/lstm"])
    t_l.append_metrics(0, [{"env_steps": 4000, "episode_return": 3.4}, {"env_steps": 8000, "episode_return": 3.5}])
    solving = evaluate_solving({"T-L/lstm": t_l, "T-LN/lstm": t_l}, tmp_path)["solving"]  # T-LN's level is 3.5 too
    assert solving["T-L/lstm"]["first_step_per_seed"]["0"] == solving["T-LN/lstm"]["first_step_per_seed"]["0"] == 8000


def test_expectation_checks():
    with pytest.raises(ValueError, match="op must be one of"):
        Expectation("T-LS/lstm", "=<", 10.4, "")
    with pytest.raises(ValueError, match="either a threshold or a run"):
        Expectation("T-LS/lstm", "<", 10.4, "", against="T-LS/gru")
    with pytest.raises(ValueError, match="only an ordering"):
        Expectation("T-LS/lstm", "<", 10.4, "", paired=True)


def summary(*finals, error=None, episodes=None):
    """A run's summary with one final value per seed (and the noise within the seeds where given)."""
    return {
        "final_mean": float(np.mean(finals)),
        "final_standard_error": error,
        "final_episodes": episodes,
        "seeds": {str(i): {"final": v} for i, v in enumerate(finals)},
    }


def test_expectation_reads_the_final_return_or_an_evaluated_value():
    summaries = {"pvm/htm": summary(10.6)}
    evaluation = {
        "choices": {"pvm/htm": {"correct": 0.16, "episodes": 32, "per_seed": [0.16]}},
        "solved": {"pvm/htm": {"fraction_solved": 0.5}},
    }
    on_choice = Expectation("pvm/htm", ">=", 0.9, "", evaluated=("choices",))
    assert Expectation("pvm/htm", ">=", 9.0, "").value(summaries, evaluation) == 10.6
    assert on_choice.value(summaries, evaluation) == 0.16 and not on_choice.outcome(summaries, evaluation)["passed"]
    assert (
        Expectation("pvm/htm", ">=", 0.4, "", evaluated=("solved", "fraction_solved")).value(summaries, evaluation)
        == 0.5
    )
    assert on_choice.measure == "choices"
    assert on_choice.value(summaries, None) is None and on_choice.value(summaries, {"choices": {}}) is None


def test_a_level_is_decided_by_a_one_sample_t_test_over_the_seeds_not_the_episodes():
    """Three seeds at 6.7, 6.85, 7.0 (standard error over seeds 0.087), however many episodes each had:
    the margin is t_{0.95, 2} = 2.92 standard errors, not 2."""
    for error in (0.39, 0.001):  # the noise within the seeds never changes the test
        summaries = {"lstm": summary(6.7, 6.85, 7.0, error=error, episodes=60)}
        above = Expectation("lstm", ">", 6.7, "").outcome(summaries, None)
        assert above["margin"] == pytest.approx(2.919986 * 0.15 / np.sqrt(3), rel=1e-5) and above["seeds"] == 3
        assert above["test"] == "one-sample t" and above["df"] == 2
        assert above["passed"] and not above["decided"]  # 6.85 - 0.253 is not above 6.7
        assert Expectation("lstm", ">", 6.5, "").outcome(summaries, None)["decided"]  # t = 4.04, p = 0.028
        # 6.85 - 0.173 would clear 6.65 at two standard errors; at df 2 it takes 2.92 (p = 0.062)
        assert not Expectation("lstm", ">", 6.65, "").outcome(summaries, None)["decided"]
    at_most = Expectation("lstm", "<=", 7.2, "").outcome({"lstm": summary(6.7, 6.85, 7.0)}, None)
    assert at_most["passed"] and at_most["decided"] and at_most["per_seed"] == [6.7, 6.85, 7.0]


def test_a_level_short_of_its_threshold_fails_however_small_the_shortfall():
    outcome = Expectation("tlb", ">=", 0.99, "").outcome({"tlb": summary(0.97, 0.985, 0.99)}, None)
    assert not outcome["passed"] and not outcome["decided"]


def test_fewer_than_three_seeds_or_a_pooled_value_decide_nothing():
    two = Expectation("a", ">", 0.5, "").outcome({"a": summary(3.9, 4.0)}, None)
    assert two["passed"] and two["p"] < 0.05 and not two["decided"] and "fewer than 3 seeds" in two["note"]
    pooled = Expectation("a", ">", 0.5, "", evaluated=("returns",)).outcome({}, {"returns": {"a": 3.9}})
    assert (
        pooled["passed"]
        and pooled["margin"] is None
        and not pooled["decided"]
        and pooled["note"].startswith("no per-seed values")
    )


def test_a_fraction_of_too_few_episodes_is_not_decided():
    """A fraction of episodes ({"correct", "episodes", "per_seed"}) is decided only on MIN_EPISODES episodes."""
    high = lambda n: {
        "fraction_correct": {"htm": {"d20": {"correct": 0.97, "episodes": n, "per_seed": [0.96, 0.97, 0.98]}}}
    }
    e = Expectation("htm", ">=", 0.9, "", evaluated=("fraction_correct", "d20"))
    few = e.outcome({}, high(MIN_EPISODES - 1))
    assert few["passed"] and not few["decided"] and "too few" in few["note"] and few["undecided_because"]
    assert e.outcome({}, high(MIN_EPISODES))["decided"]


def test_an_ordering_is_welch_over_seeds_or_paired_when_the_seeds_share_their_data():
    a, b = [0.60, 0.70, 0.80], [0.55, 0.66, 0.74]  # a is above b in every seed by 0.04-0.06
    evaluation = {
        "held_out": {
            "a": {"accuracy": {"mean": 0.7, "standard_error": 0.001, "episodes": 6000, "per_seed": a}},
            "b": {"accuracy": {"mean": 0.65, "standard_error": 0.001, "episodes": 6000, "per_seed": b}},
        }
    }
    welch = Expectation("a", ">", None, "", evaluated=("held_out", "accuracy"), against="b").outcome({}, evaluation)
    paired = Expectation("a", ">", None, "", evaluated=("held_out", "accuracy"), against="b", paired=True).outcome(
        {}, evaluation
    )
    by_scipy = stats.ttest_ind(a, b, equal_var=False, alternative="greater")
    assert welch["test"] == "Welch t" and welch["p"] == pytest.approx(by_scipy.pvalue)
    assert welch["statistic"] == pytest.approx(by_scipy.statistic) and welch["df"] == pytest.approx(by_scipy.df)
    by_scipy = stats.ttest_rel(a, b, alternative="greater")
    assert paired["test"] == "paired t" and paired["p"] == pytest.approx(by_scipy.pvalue) and paired["df"] == 2
    assert welch["passed"] and not welch["decided"]  # the seeds' spread swamps a difference of 0.05
    assert paired["decided"] and paired["against_per_seed"] == b  # but every seed pair agrees
    assert "within seeds" in paired["note"]


def test_an_ordering_is_reversed_only_beyond_its_margin_on_three_seeds():
    summaries = {
        "a": summary(5.0, 5.1, 4.9),
        "b": summary(7.0, 7.1, 6.9),
        "c": summary(5.2, 4.8, 5.6),
        "d": summary(7.0, 7.2),
    }
    assert Expectation("a", ">", None, "", against="b").outcome(summaries, None)["reversed"]
    assert not Expectation("c", ">", None, "", against="a").outcome(summaries, None)["reversed"]  # not beyond
    assert not Expectation("a", ">", None, "", against="d").outcome(summaries, None)["reversed"]  # two seeds of d
    assert Expectation("b", "<", None, "", against="a").outcome(summaries, None)["reversed"]


def test_expectation_compares_two_runs_at_one_measure():
    entry = lambda *solved: {
        "mean": float(np.mean(solved)),
        "standard_error": None,
        "episodes": None,
        "per_seed": list(solved),
    }
    evaluation = {"solving": {"a": {"solved": entry(1, 1, 1)}, "b": {"solved": entry(0, 1, 0)}}}
    more = Expectation("a", ">", None, "", evaluated=("solving", "solved"), against="b").outcome({}, evaluation)
    assert more["value"] == 1 and more["threshold"] == pytest.approx(1 / 3) and more["passed"]
    fewer = Expectation("b", ">", None, "", evaluated=("solving", "solved"), against="a").outcome({}, evaluation)
    assert not fewer["passed"]
    missing = Expectation("a", ">", None, "", evaluated=("solving", "solved"), against="c").outcome({}, evaluation)
    assert not missing["passed"] and not missing["decided"]  # the other run's value is missing


@pytest.mark.slow
def test_reproduce_writes_table_figure_and_checks(tmp_path, capsys):
    from memrl.experiments.runner import reproduce

    experiment = Experiment(
        name="tiny",
        version=1,
        description="tiny",
        runs={
            "T-LN/gru": tiny_ppo(),
            "T-LN/lstm": tiny_ppo(core="lstm"),
            "T-LN/gru-grown": tiny_ppo(init_params="T-LN/gru"),
        },
        expectations=(
            Expectation("T-LN/gru", ">=", 100.0, "cannot pass", central=True),
            Expectation("T-LN/lstm", ">=", -100.0, "passes"),
        ),
        reproduces="Beck et al. 2020, Fig. 4 (T-LN panel)",
        finding="tiny",
        paper_steps=1_000_000,
    )
    results = reproduce(experiment, tmp_path / "out", workers=2, record_dir=tmp_path / "records")
    record = json.loads((tmp_path / "records" / "tiny" / "v1.json").read_text())
    assert record == json.loads((tmp_path / "out" / "record.json").read_text())
    assert (
        check_record(record, "tiny") and record["kind"] == "reproduction"
    )  # its numbers are what its per-seed values give
    assert (  # the central check fails its direction, and no learning check says whether the GRU learned
        record["verdict"] == "learning unchecked"
        and record["paper"] == "Beck et al. 2020"
        and record["figure"] == "Fig. 4"
    )
    assert record["runs"]["T-LN/gru"] == {
        "steps": 64,
        "unit": "environment steps",
        "paper_steps": 1_000_000,
        "seeds": 1,
    }
    assert [(c["central"], c["passed"], c["decided"]) for c in record["checks"]] == [
        (True, False, False),
        (False, True, False),
    ]
    assert all(
        len(c["per_seed"]) == 1 and c["margin"] is None for c in record["checks"]
    )  # one seed: no spread over seeds
    tmp_path = tmp_path / "out"
    assert (tmp_path / "curves.png").stat().st_size > 0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["checks"][0]["passed"] is False and set(saved["summaries"]) == {
        "T-LN/gru",
        "T-LN/lstm",
        "T-LN/gru-grown",
    }
    grown = json.loads((tmp_path / "T-LN" / "gru-grown" / "config.json").read_text())["config"]
    assert grown["init_params"] == str(tmp_path / "T-LN" / "gru")  # a run of the experiment: its folder, trained first
    assert (
        results["summaries"]["T-LN/lstm"]["steps_per_seed"] == 64
        and results["summaries"]["T-LN/lstm"]["metric"] == "episode_return"
    )
    assert {"final_standard_error", "final_episodes"} <= saved["summaries"]["T-LN/gru"].keys() and saved["checks"][0][
        "note"
    ]
    printed = capsys.readouterr().out
    assert "FAIL" in printed and "PASS (not decided)" in printed and "within seeds" in printed


def test_runs_that_start_from_other_runs_train_after_them():
    from memrl.experiments.runner import stages, with_sources_in

    tiny = dict(num_envs=4, rollout_len=8, total_steps=64)
    runs = {
        "a/first": PPOConfig(**tiny),
        "a/second": PPOConfig(init_params="a/first", **tiny),
        "a/third": PPOConfig(init_params="a/second", **tiny),
        "a/elsewhere": PPOConfig(init_params="/earlier/run", **tiny),
    }
    experiment = Experiment(
        name="staged",
        version=1,
        description="",
        runs=runs,
        expectations=(),
        reproduces="-",
        finding="-",
        paper_steps=None,
    )
    resolved = with_sources_in(experiment, Path("/out"))
    assert (
        resolved.runs["a/second"].init_params == "/out/a/first"
        and resolved.runs["a/elsewhere"].init_params == "/earlier/run"
    )
    assert stages(resolved, Path("/out")) == [["a/first", "a/elsewhere"], ["a/second"], ["a/third"]]
    circle = {"a/x": PPOConfig(init_params="a/y", **tiny), "a/y": PPOConfig(init_params="a/x", **tiny)}
    with pytest.raises(ValueError, match="in a circle"):
        stages(with_sources_in(dataclasses.replace(experiment, runs=circle), Path("/out")), Path("/out"))


@pytest.mark.parametrize("name", ["epn-memory-planning", "epn-graph-nav"])
@pytest.mark.parametrize("preset", ["cpu", "paper"])
def test_epn_experiments_are_well_formed(name, preset):
    experiment = experiments.get(name, preset)
    assert all(c.learner == "impala" and c.seeds == 3 for c in experiment.runs.values())
    assert any(c.core_name == "epn" for c in experiment.runs.values()) and any(
        c.core_name == "lstm" for c in experiment.runs.values()
    )
    assert all(e.run in experiment.runs for e in experiment.expectations)
    assert experiment.evaluation is not None
    if preset == "paper":  # the paper's RMSprop and planner, settings inside its tuning ranges (Table 1)
        for c in experiment.runs.values():
            assert (c.optimizer, c.rmsprop_eps, c.rmsprop_decay, c.rmsprop_momentum) == ("rmsprop", 1e-4, 0.99, 0.0)
            assert (
                1e-5 <= c.lr <= 4e-4
                and 1e-3 <= c.entropy_coef <= 1e-2
                and 32 <= c.num_envs <= 128
                and 10 <= c.rollout_len <= 40
            )
            assert 0.9 <= c.gamma <= 0.95
        assert experiment.runs[next(r for r in experiment.runs if r.endswith("/epn"))].core.iterations == 4
    smaller = experiment.with_run_settings(total_steps=32_000)
    assert all(c.total_steps == 32_000 for c in smaller.runs.values())
    json.dumps(smaller.describe())


def test_an_experiment_with_some_of_its_runs_keeps_only_the_checks_between_them():
    experiment = experiments.get("amrl-minecraft", "paper")
    part = experiment.with_runs(["MC-LSO/dnc", "MC-LS/set", "MC-LSO/lstm"])
    assert list(part.runs) == ["MC-LS/set", "MC-LSO/lstm", "MC-LSO/dnc"]  # the experiment's order
    assert all(part.runs[r] == experiment.runs[r] for r in part.runs)  # the same configs: the same run folders
    kept = {(e.run, e.against) for e in part.expectations}
    assert kept == {("MC-LS/set", ""), ("MC-LSO/dnc", "MC-LSO/lstm")}
    assert kept == {
        (e.run, e.against) for e in experiment.expectations if {e.run, e.against or e.run} <= set(part.runs)
    }
    for runs in (["MC-LS/sett"], []):
        with pytest.raises(ValueError, match="has runs MC-LS/amrl-max, .*; got"):
            experiment.with_runs(runs)


def test_final_agents_run_on_another_environment_and_core_setting(tmp_path):
    """A graph-nav agent trained on 5 junctions acts on 7 with another number of EPN iterations."""
    from memrl.learn.impala_config import ImpalaConfig
    from memrl.run.final_agents import agent_rewards, final_params
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    config = ImpalaConfig(
        env=envs.make("graph-nav/5", bank_size=4),
        core=cores.make("epn", capacity=8, embed_dim=4, width=8),
        head_widths=(8,),
        num_envs=2,
        rollout_len=4,
        total_steps=8,
    )
    folder = RunFolder(tmp_path / "run")
    folder.prepare(config)
    train_seeds(config, folder, [0])
    rewards = agent_rewards(
        config,
        final_params(folder),
        jax.random.PRNGKey(0),
        6,
        env=envs.make("graph-nav/7", bank_size=4),
        core=config.core.clone(iterations=4),
    )
    assert len(rewards) == 1 and rewards[0].shape == (6, 2)


def test_tlb_copying_compares_tlb_with_the_feedback_transformer_and_counts_samples_to_perfect(tmp_path):
    from memrl.experiments.tlb_copying import samples_to_perfect
    from memrl.run.folder import RunFolder

    paper = experiments.get("tlb-copying", "paper")
    assert sorted(paper.panels()) == sorted(f"gap {g}" for g in (100, 200, 300, 400, 500, 600))
    for config in paper.runs.values():
        gap = config.task.gap
        assert (config.batch_size, config.lr) == (100, 1e-4)
        assert {k: held_settings(config.core)[k] for k in ("d_model", "mlp_dim")} == dict(d_model=256, mlp_dim=512)
        if config.core_name == "feedback-transformer":
            assert config.core.num_layers == 4
        else:
            assert (config.core.num_reads, config.core.self_per_read) == (4, 1)
            assert config.core.chunk_size == (10 if config.core_name == "tlb" else 2 * 10 + gap + 1)
    assert {config.core_name for config in paper.runs.values()} == {"tlb", "feedback-transformer", "transformer"}
    against = [(e.run, e.against) for e in paper.expectations if e.against]
    assert against == [(f"gap {g}/tlb", f"gap {g}/feedback-transformer") for g in (100, 200, 300, 400, 500, 600)]
    assert [e.run for e in paper.expectations if e.run.endswith("/feedback-transformer")] == [
        f"gap {g}/feedback-transformer" for g in (400, 500, 600)
    ]

    config = experiments.get("tlb-copying", "cpu").runs["gap 100/tlb"]
    folder = RunFolder(tmp_path / "gap 100/tlb")
    folder.prepare(config)
    folder.append_metrics(
        0,
        [
            {"sequences": 1000, "test_accuracy": 0.5},
            {"sequences": 2000, "test_accuracy": 1.0},
            {"sequences": 3000, "test_accuracy": 0.99},
        ],
    )
    folder.append_metrics(1, [{"sequences": 1000, "test_accuracy": 0.5}, {"sequences": 4000, "test_accuracy": 1.0}])
    folder.append_metrics(2, [{"sequences": 1000, "test_accuracy": 0.9}])  # never: counts as the budget
    row = samples_to_perfect({"gap 100/tlb": folder})["samples_to_perfect"]["gap 100/tlb"]
    values = [2000, 4000, config.total_steps]
    assert row["first_perfect"] == [2000, 4000, None] and row["reached"] == 2 and row["episodes"] == 3
    assert row["per_seed"] == values  # never counts as the budget
    assert row["mean"] == sum(values) / 3
    assert abs(row["standard_error"] - float(np.std(values, ddof=1) / np.sqrt(3))) < 1e-9


def test_tlb_listops_is_table_4_with_table_7s_chunk_sizes_in_the_paper_preset():
    paper = experiments.get("tlb-listops", "paper").runs
    assert sorted(paper) == sorted(
        ["listops/tlb", "listops/transformer"] + [f"chunk size/tlb chunk {k}" for k in (2, 20, 500, 1000)]
    )
    for config in paper.values():
        assert (config.batch_size, config.lr, config.lr_warmup, config.num_updates) == (32, 1e-4, 1000, 5000)
        assert (config.task.min_length, config.task.max_length, config.task.train_size) == (
            500,
            2000,
            96_000,
        )
        assert (
            config.core.d_model,
            config.core.mlp_dim,
            config.core.num_reads,
            config.core.self_per_read,
        ) == (64, 128, 2, 1)
    assert (paper["listops/tlb"].core.chunk_size, paper["listops/tlb"].core.num_state) == (100, 20)
    assert (
        paper["listops/transformer"].core_name == "transformer" and paper["listops/transformer"].core.chunk_size == 2000
    )
    assert [(e.run, e.against) for e in experiments.get("tlb-listops", "cpu").expectations if not e.learning] == [
        ("listops/tlb", "listops/transformer")
    ]


def test_tlb_image_is_table_1_and_2_on_digits_with_the_papers_layers_and_optimiser():
    paper = experiments.get("tlb-image", "paper").runs
    assert sorted(paper) == ["digits/tlb", "digits/tlb no past info", "digits/tlb no top-down", "digits/vit"]
    for config in paper.values():
        assert (config.batch_size, config.lr, config.weight_decay, config.seeds) == (128, 1e-3, 0.05, 3)
        assert config.total_steps == 100 * 1_500 and config.core.causal is False
    tlb, vit = held_settings(paper["digits/tlb"].core), held_settings(paper["digits/vit"].core)
    assert (tlb["num_reads"] * tlb["self_per_read"], tlb["self_per_read"], tlb["num_state"], tlb["chunk_size"]) == (
        6,
        2,
        5,
        16,
    )
    assert paper["digits/vit"].core_name == "transformer" and (vit["num_reads"], vit["chunk_size"]) == (9, 64)
    assert (tlb["state_reads"], paper["digits/tlb"].readout, paper["digits/vit"].readout) == (
        "top-down",
        "state",
        "steps",
    )
    assert (
        held_settings(paper["digits/tlb no past info"].core) == tlb | {"state_reads": "none"}
        and paper["digits/tlb no past info"].readout == "state"
    )
    assert (
        held_settings(paper["digits/tlb no top-down"].core) == tlb | {"state_reads": "own-layer"}
        and paper["digits/tlb no top-down"].readout == "state"
    )
    cpu = experiments.get("tlb-image", "cpu").runs
    assert cpu["digits/tlb"].task.length == 16 and (
        cpu["digits/tlb"].core.chunk_size,
        cpu["digits/vit"].core.chunk_size,
    ) == (4, 16)
    assert {(e.run, e.against) for e in experiments.get("tlb-image", "cpu").expectations if not e.learning} == {
        ("digits/tlb", "digits/vit"),
        ("digits/tlb", "digits/tlb no past info"),
        ("digits/tlb", "digits/tlb no top-down"),
    }


def test_tlb_babyai_is_fig_4_bosslevel_and_8_levels_with_the_papers_model():
    paper = experiments.get("tlb-babyai", "paper").runs
    assert sorted(paper) == ["8 levels/tlb", "8 levels/transformer", "BossLevel/tlb", "BossLevel/transformer"]
    assert len(paper["8 levels/tlb"].task.level_names) == 8
    for run, config in paper.items():
        assert (config.lr, config.num_updates, config.seeds, config.task.episodes) == (1e-4, 50_000, 3, 100_000)
        args = held_settings(config.core)
        assert (args["d_model"], args["num_heads"], args["mlp_dim"], args["num_reads"], args["self_per_read"]) == (
            512,
            4,
            1024,
            6,
            1,
        )
        if run.endswith("/tlb"):
            assert (args["chunk_size"], args["num_state"]) == (30, 5)
        else:
            assert config.core_name == "transformer" and args["chunk_size"] == config.task.max_steps
    central = [e for e in experiments.get("tlb-babyai", "cpu").expectations if e.central]
    assert len(central) == 2 and all(e.paired and not e.shared_episodes for e in central)  # each seed its own set


@pytest.mark.skipif(importlib.util.find_spec("minigrid") is None, reason="the babyai extra")
def test_tlb_babyai_plays_each_final_model_in_the_real_level(tmp_path):
    from memrl.experiments.tlb_babyai import EVAL_SEED, evaluate_success, evaluation_seed
    from memrl.learn.supervised_config import SupervisedConfig
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    config = SupervisedConfig(
        task=tasks.make("babyai", **dict(levels="GoToLocal", episodes=4, test_episodes=2, max_steps=12)),
        core=cores.make("gru", hidden=8),
        embed_dim=8,
        batch_size=4,
        total_steps=16,
        updates_per_chunk=2,
        seeds=2,
    )
    folder = RunFolder(tmp_path / "GoToLocal/gru")
    folder.prepare(config)
    train_seeds(config, folder, [0, 1])
    evaluation = evaluate_success(3)({"GoToLocal/gru": folder}, tmp_path)
    row = evaluation["success"]["GoToLocal/gru"]
    assert list(row["levels"]) == ["GoToLocal"] and row["mean"] == row["levels"]["GoToLocal"]
    assert row["mean"] in {i / 6 for i in range(7)}  # 3 episodes for each of 2 seeds
    assert [evaluation_seed(folder, seed, 3) for seed in (0, 1)] == [EVAL_SEED, EVAL_SEED + 3]  # each its own
    # convergence: each seed's mean of its two held-out checks (after updates 2 and 4)
    for seed, area in zip([0, 1], evaluation["convergence"]["GoToLocal/gru"]["per_seed"]):
        checks = [metrics["test_accuracy"] for metrics in folder.read_metrics(seed)[1::2]]
        assert len(checks) == 2 and area == pytest.approx(np.mean(checks))


def test_tlb_decision_is_table_3s_model_against_a_decision_transformers_context():
    paper = experiments.get("tlb-decision", "paper").runs
    assert sorted(paper) == ["T-LN 100/tlb", "T-LN 100/transformer", "T-LN 100/transformer, whole episode"]
    for config in paper.values():
        assert (
            config.lr,
            config.weight_decay,
            config.seeds,
            config.core.d_model,
            config.core.mlp_dim,
        ) == (6e-4, 0.1, 10, 128, 512)
        assert config.core.num_reads * config.core.self_per_read == 6
    tlb = held_settings(paper["T-LN 100/tlb"].core)
    assert (tlb["chunk_size"], tlb["self_per_read"], tlb["num_state"]) == (12, 2, 6)
    assert paper["T-LN 100/transformer"].core.chunk_size == 30  # DT's context
    assert paper["T-LN 100/transformer, whole episode"].core.chunk_size == 100


def test_tlb_decision_plays_each_final_model_asked_for_both_returns(tmp_path, monkeypatch):
    from memrl.experiments import tlb_decision
    from memrl.learn.supervised_config import SupervisedConfig
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    monkeypatch.setattr(tlb_decision, "EVAL_EPISODES", 8)
    config = SupervisedConfig(
        task=tasks.make("tmaze-returns", **dict(maze_length=3, episodes=8, test_episodes=4)),
        core=cores.make("gru", hidden=8),
        embed_dim=8,
        batch_size=4,
        total_steps=8,
        updates_per_chunk=2,
        seeds=2,
    )
    folder = RunFolder(tmp_path / "T-LN 3/gru")
    folder.prepare(config)
    train_seeds(config, folder, [0, 1])
    returns = tlb_decision.final_returns(folder, 8)
    assert sorted(returns) == ["failure", "success"] and all(len(v) == 2 for v in returns.values())
    assert all(-3.0 <= r <= 4.0 for v in returns.values() for r in v)
    row = tlb_decision.evaluate_returns({"T-LN 3/gru": folder}, tmp_path)["returns"]["T-LN 3/gru"]
    assert {name: entry["per_seed"] for name, entry in row.items()} == returns
    assert {name: entry["mean"] for name, entry in row.items()} == {
        name: float(np.mean(v)) for name, v in returns.items()
    }


def test_held_out_evaluation_scores_the_final_model_on_fresh_held_out_sequences(tmp_path):
    """The accuracy equals an argmax count on the same held-out sequences, with the standard error
    over the batches; every run sees the same ones."""
    import shutil

    import numpy as np

    from memrl.experiments.evaluations import held_out_evaluation
    from memrl.learn.supervised import SupervisedLearner
    from memrl.learn.supervised_config import SupervisedConfig
    from memrl.run.final_agents import final_params, held_out_batches
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    config = SupervisedConfig(
        task=tasks.make("nth-farthest", **dict(num_objects=4, num_features=4)),
        core=cores.make("lstm", hidden=8),
        embed_dim=8,
        head_widths=(8,),
        batch_size=8,
        total_steps=16,
        updates_per_chunk=1,
    )
    folders = {"p/a": RunFolder(tmp_path / "a"), "p/b": RunFolder(tmp_path / "b")}
    folders["p/a"].prepare(config)
    train_seeds(config, folders["p/a"], [0])
    shutil.copytree(tmp_path / "a", tmp_path / "b")  # a second run with the same final model
    (batches,) = held_out_batches(folders["p/a"], 40, batch_size=20)

    learner = SupervisedLearner(config)
    (params,) = final_params(folders["p/a"])
    right = []
    for key in jax.random.split(jax.random.PRNGKey(2018), 2):
        batch = learner.task.with_batch_size(20).sample(key, "test")
        logits = np.asarray(learner.model.apply(params, batch.inputs))
        mask, targets = np.asarray(batch.target_mask), np.asarray(batch.targets)
        assert mask.sum() == 20  # one scored step per sequence: the last
        right.append((logits.argmax(-1) == targets)[mask].mean())
    assert batches["accuracy"] == pytest.approx(right)

    rows = held_out_evaluation(40, batch_size=20)(folders, tmp_path)["held_out"]
    entry = rows["p/a"]["accuracy"]
    assert entry == rows["p/b"]["accuracy"] and rows["p/a"]["seeds"] == 1
    assert (
        entry["mean"] == pytest.approx(np.mean(right))
        and entry["episodes"] == 40
        and entry["per_seed"] == [pytest.approx(np.mean(right))]
    )
    assert entry["standard_error"] == pytest.approx(np.std(right, ddof=1) / np.sqrt(2))
    assert {"accuracy_rank0", "accuracy_beyond_rank0"} <= rows["p/a"].keys()  # the task's kinds of trial, scored apart
    with pytest.raises(ValueError, match="multiple of batch_size 1280"):
        held_out_batches(folders["p/a"], 1000)


@pytest.mark.parametrize("preset", ["cpu", "gpu", "paper"])
def test_htm_ballet_presets_cover_the_issue(preset):
    from memrl.experiments.htm_ballet import preset_runs

    runs = preset_runs(preset)
    assert set(runs) == {f"{panel}/{core}" for panel in ("mixed", "2-6 mixed") for core in ("htm", "gtrxl", "lstm")}
    assert all(c.learner == "impala" and c.encoder == "conv" for c in runs.values())
    losses = {
        (c.policy_coef, c.value_coef, c.reconstruction_coef, c.entropy_coef, c.optimizer, c.lr, c.rollout_len)
        for c in runs.values()
    }
    assert losses == {(0.1, 1.0, 1.0, 1e-3, "adam", 2e-4, 64)}  # HTM's Table 1, Ballet column
    assert {c.env_name for c in runs.values()} == {"ballet/mixed", "ballet/2-6_mixed"}
    image = {c.component_record("env").get("observation", "image") for c in runs.values()}
    assert image == ({"image"} if preset == "paper" else {"cells"})
    htm = held_settings(runs["mixed/htm"].core)
    assert htm["num_chunks"] * htm["chunk_size"] > 1024  # more chunks than the longest episode needs
    if preset == "paper":
        assert (htm["d_model"], htm["num_layers"], htm["num_heads"], htm["chunk_size"], htm["k"]) == (512, 4, 8, 32, 8)
        assert runs["mixed/gtrxl"].core.memory_length == 256 and all(c.num_envs == 32 for c in runs.values())
    if preset == "gpu":
        assert all(c.total_steps >= 100_000_000 for c in runs.values())
    experiment = experiments.get("htm-ballet", preset)
    assert all(e.run in experiment.runs for e in experiment.expectations) and experiment.evaluation is not None
    named = experiment.with_run_settings(num_envs=256, total_steps=16384)
    assert all(
        c.num_envs == 256 and held_settings(c.core) == held_settings(runs[r].core) for r, c in named.runs.items()
    )


def test_experiments_declare_their_presets_as_data():
    from memrl.experiments.base import register, registration, takes_cores, with_presets

    assert registration("htm-ballet").presets == ("cpu", "gpu", "paper") and registration("tln-demo").presets == ()
    assert "tln-demo" not in with_presets() and takes_cores() == ["amrl-tmaze"]
    with pytest.raises(ValueError, match="presets must be among"):
        register("tiny", lambda preset: None, presets=("tpu",))
    with pytest.raises(ValueError, match="can add the cores dnc, not gru"):
        experiments.get("amrl-tmaze", "cpu", ("gru",))
    with pytest.raises(ValueError, match="adds no cores"):
        experiments.get("htm-ballet", "cpu", ("dnc",))


def test_presets_are_checked():
    with pytest.raises(ValueError, match="preset must be one of"):
        experiments.get("htm-ballet", "tpu")
    with pytest.raises(ValueError, match="has no presets"):
        experiments.get("tln-demo", "cpu")
    assert experiments.get("amrl-tmaze").preset == "cpu"  # the tests run on the CPU backend


def test_every_preset_builds_and_every_settings_row_reads_a_value():
    from memrl.experiments.settings_table import preset_value

    for name in experiments.base.with_presets():
        built = {preset: experiments.get(name, preset) for preset in experiments.get(name).presets}
        assert "cpu" in built and "paper" in built, name
        for preset, experiment in built.items():
            assert experiment.preset == preset and experiment.settings, name
            for config in experiment.runs.values():  # configs are data: each is checked where its run is prepared
                config.validate()
            assert all(
                e.run in experiment.runs and (not e.against or e.against in experiment.runs)
                for e in experiment.expectations
            )
        for row in next(iter(built.values())).settings:
            values = [row.fixed or preset_value(e, row.field) for e in built.values()]
            assert any(v != "-" for v in values), f"{name}: {row.setting} ({row.field}) reads no value"


def test_the_docs_hold_the_settings_tables_the_code_gives():
    from pathlib import Path

    from memrl.experiments.settings_table import settings_document

    docs = Path(__file__).parents[2] / "docs" / "experiment_settings.md"
    assert docs.read_text() == settings_document(), (
        "regenerate: python -m memrl.experiments.settings_table > docs/experiment_settings.md"
    )


def test_settings_table_marks_where_runs_differ():
    from memrl.experiments.settings_table import settings_table

    table = settings_table("amrl-tmaze")
    assert "| discount γ | 0.98 (A.5) | 0.98 | 0.98 |" in table
    assert "| env steps per run |" in table and "160,000 (T-LS, T-LN); 64,000 (T-L)" in table


@pytest.mark.parametrize("name", ["htm-k-sweep", "htm-pvm"])
@pytest.mark.parametrize("preset", ["cpu", "gpu", "paper"])
def test_other_htm_experiments_are_well_formed(name, preset):
    experiment = experiments.get(name, preset)
    assert all(c.learner == "impala" for c in experiment.runs.values()) and experiment.evaluation is not None
    assert all(e.run in experiment.runs for e in experiment.expectations)
    if name == "htm-k-sweep":
        assert sorted(c.core.k for c in experiment.runs.values()) == [1, 2, 4, 8]
    else:
        assert {c.core_name for c in experiment.runs.values()} == {"htm", "gtrxl", "lstm"}
        htm = held_settings(experiment.runs["pvm/htm"].core)
        assert htm["num_chunks"] * htm["chunk_size"] >= 600  # the store spans a whole episode
    json.dumps(experiment.describe())


@pytest.mark.slow
def test_htm_ballet_evaluation_scores_each_test_level(tmp_path):
    """A (barely trained) agent is scored on a test level (one, to keep compiling short); returns are
    0/1 per episode."""
    import dataclasses

    from memrl.experiments.htm_ballet import TEST_LEVELS, evaluate_levels, preset_runs
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    config = dataclasses.replace(
        preset_runs("cpu")["mixed/lstm"],
        core=preset_runs("cpu")["mixed/lstm"].core.clone(hidden=8),
        conv_channels=(2, 2, 2),
        head_widths=(8,),
        num_envs=2,
        rollout_len=4,
        total_steps=8,
        env=envs.make("ballet/2_delay16"),
    )
    folder = RunFolder(tmp_path / "run")
    folder.prepare(config)
    train_seeds(config, folder, [0])
    results = evaluate_levels({"mixed/lstm": folder}, tmp_path, steps=330, levels=("2_delay16",))["fraction_correct"][
        "mixed/lstm"
    ]
    assert set(results) == {"2_delay16"} and "2_delay16" in TEST_LEVELS
    assert 0.0 <= results["2_delay16"]["correct"] <= 1.0 and results["2_delay16"]["episodes"] >= 2


def test_htm_pai_pairs_each_memory_with_its_one_layer_control():
    experiment = experiments.get("htm-pai")
    assert set(experiment.panels()) == {"16 chains", "2 chains"}
    for panel, runs in experiment.panels().items():
        configs = [experiment.runs[r] for r in runs]
        assert sorted(c.core.num_layers for c in configs) == [1, 2]
        assert {c.task.num_chains for c in configs} == {int(panel.split()[0])}
        for config in configs:  # every run starts on direct queries only; MEMO's memory is grown from 2 chains
            first_updates, first_settings = config.curriculum[0]
            assert first_updates > 0 and first_settings["direct_fraction"] == 1.0
            stored = [settings.get("stored_chains", 0) for _, settings in config.curriculum]
            assert stored == ([2, 2, 4, 8] if panel == "16 chains" else [0])
    assert all(e.run in experiment.runs and e.evaluated[0] == "held_out" for e in experiment.expectations)


def test_htm_pai_paper_preset_is_the_papers_model_on_memos_batches():
    experiment = experiments.get("htm-pai", "paper")
    deep = [c for r, c in experiment.runs.items() if "4 layers" in r]
    assert len(deep) == 2 and all(
        (c.core.d_model, c.core.num_heads, c.core.k, c.lr, c.batch_size) == (512, 8, 32, 1e-4, 32) for c in deep
    )
    assert all(not c.stages for c in experiment.runs.values())
    assert all(e.run in experiment.runs for e in experiment.expectations)


def test_the_demo_is_amrl_tmazes_contrast_with_the_lstms_positive_control():
    demo = experiments.get("tln-demo")
    assert set(demo.runs) == {"T-L/lstm", "T-LN/amrl-max", "T-LN/lstm"} and all(
        c.seeds == 1 for c in demo.runs.values()
    )
    assert {(e.run, e.op) for e in demo.expectations} == {
        ("T-L/lstm", ">="),
        ("T-LN/amrl-max", ">="),
        ("T-LN/lstm", "<="),
    }
    full = experiments.get("amrl-tmaze", "cpu").runs
    budgets = {"T-L": 48_000, "T-LN": 80_000}
    assert all(
        config == dataclasses.replace(full[run], seeds=1, total_steps=budgets[run.split("/")[0]], updates_per_chunk=2)
        for run, config in demo.runs.items()
    )


@pytest.mark.parametrize("preset", ["cpu", "paper"])
def test_htm_graph_nav_trains_every_memory_with_the_streets_settings(preset):
    from memrl.agents.paper_agents import HTM_STREETS_LOSSES

    experiment = experiments.get("htm-graph-nav", preset)
    configs = experiment.runs
    assert {c.core_name for c in configs.values()} == {"htm", "epn", "gtrxl"} and all(
        c.env_name == "graph-nav/5" for c in configs.values()
    )
    assert all(getattr(c, field) == value for c in configs.values() for field, value in HTM_STREETS_LOSSES.items())
    htm = held_settings(configs["5 junctions/htm"].core)
    assert (
        htm["chunk_size"] == 4 and htm["num_chunks"] * htm["chunk_size"] > 200
    )  # Table 1: a store longer than the episode
    assert (
        len({(c.num_envs, c.total_steps, c.seeds, c.encoder) for c in configs.values()}) == 1
    )  # only the memory differs
    json.dumps(experiment.describe())


@pytest.mark.parametrize("preset", ["cpu", "paper"])
def test_htm_object_permanence_has_figure_4s_runs_with_the_objects_settings(preset):
    from memrl.experiments.htm_object_permanence import LONGEST_EPISODE, OBJECTS_LOSSES

    runs = experiments.get("htm-object-permanence", preset).runs
    assert set(runs) == {"mixed/htm", "mixed/gtrxl", "mixed/lstm", "delay30/htm"}
    assert (
        runs["mixed/htm"].env_name == "object-permanence/mixed"
        and runs["delay30/htm"].env_name == "object-permanence/delay30"
    )
    assert all(getattr(c, field) == value for c in runs.values() for field, value in OBJECTS_LOSSES.items())
    htm = held_settings(runs["mixed/htm"].core)
    assert (htm["chunk_size"], htm["k"]) == (16, 8) and htm["num_chunks"] * htm["chunk_size"] > LONGEST_EPISODE


@pytest.mark.parametrize("preset", ["cpu", "paper"])
def test_htm_word_learning_trains_on_0_to_2_distractors_with_the_words_settings(preset):
    from memrl.envs.word_learning import TIME_LIMIT
    from memrl.experiments.htm_word_learning import WORDS_LOSSES

    experiment = experiments.get("htm-word-learning", preset)
    runs = experiment.runs
    assert set(runs) == {"train/htm", "train/gtrxl", "train/lstm"} and {c.env_name for c in runs.values()} == {
        "word-learning/train"
    }
    assert all(getattr(c, field) == value for c in runs.values() for field, value in WORDS_LOSSES.items())
    htm = held_settings(runs["train/htm"].core)
    assert (htm["chunk_size"], htm["chunk_overlap"], htm["k"]) == (16, 1, 16)
    assert (
        htm["num_chunks"] * (htm["chunk_size"] - htm["chunk_overlap"]) > TIME_LIMIT
    )  # the store spans the longest episode
    assert {e.evaluated[1] for e in experiment.expectations} == {"distractors20", "episodes2"}


@pytest.mark.parametrize("preset", ["cpu", "paper"])
def test_amrl_minecraft_is_figure_5_with_amrls_image_agent(preset):
    experiment = experiments.get("amrl-minecraft", preset)
    assert set(experiment.panels()) == {"MC-LS", "MC-LSO", "MC-LSN"}
    for panel, runs in experiment.panels().items():
        assert sorted(r.split("/")[1] for r in runs) == sorted(
            ["amrl-max", "amrl-avg", "set", "lstm", "lstm-stack", "dnc"]
        )
        assert {experiment.runs[r].env_name for r in runs} == {f"minecraft-maze/{panel}"}
    for config in experiment.runs.values():  # A.5's image FF1 and FF2
        assert (config.encoder, config.conv_channels, config.conv_kernels, config.conv_strides) == (
            "conv",
            (16, 32),
            (4, 4),
            (2, 2),
        )
        assert config.encoder_widths == (256,) and config.head_widths == (256,) and config.gamma == 0.98
    assert experiment.runs["MC-LSO/dnc"].core == cores.make(
        "dnc", memory_size=16, word_size=16, num_reads=4, num_writes=1, hidden=256, output_size=256
    )
    assert all(
        e.run in experiment.runs and (not e.against or e.against in experiment.runs) for e in experiment.expectations
    )
    seeds, steps = {"cpu": (3, 64_000), "paper": (5, 1_000_000)}[preset]  # both with AMRL's batching (A.5) and lr 5e-4
    assert all(
        (c.steps_per_update, c.minibatch_steps, c.update_epochs, c.lr) == (4000, 200, 30, 5e-4)
        for c in experiment.runs.values()
    )
    assert all((c.seeds, c.total_steps) == (seeds, steps) for c in experiment.runs.values())
    assert experiment.keeps_results  # a maze's results survive the sitting that trained it
    assert experiment.parts == ({m: (m,) for m in ("MC-LS", "MC-LSO", "MC-LSN")} if preset == "cpu" else {})


def test_amrl_minecraft_measures_learning_speed_as_the_mean_return_over_training(tmp_path):
    from memrl.experiments.amrl_minecraft import mean_training_return
    from memrl.run.folder import RunFolder

    config = dataclasses.replace(experiments.get("amrl-minecraft", "cpu").runs["MC-LS/set"], seeds=2)
    folder = RunFolder(tmp_path / "MC-LS/set")
    folder.prepare(config)
    folder.append_metrics(0, [{"env_steps": 4000, "episode_return": 2.0}, {"env_steps": 8000, "episode_return": 6.0}])
    folder.append_metrics(
        1,
        [
            {"env_steps": 4000, "episode_return": float("nan")},
            {"env_steps": 8000, "episode_return": 0.0},
            {"env_steps": 12000, "episode_return": 3.0},
        ],
    )
    training = mean_training_return({"MC-LS/set": folder}, tmp_path)["training"]["MC-LS/set"]
    assert (
        training["per_seed"] == [4.0, 1.5] and training["mean"] == 2.75
    )  # updates without an ended episode skipped, zeros kept
    assert training["standard_error"] is None and training["episodes"] is None  # no spread recorded


def test_amrl_minecraft_learning_speed_carries_the_standard_error_of_its_episodes(tmp_path):
    from memrl.experiments.amrl_minecraft import learns_faster, mean_training_return
    from memrl.run.folder import RunFolder

    config = experiments.get("amrl-minecraft", "cpu").runs["MC-LS/set"]
    folders = {run: RunFolder(tmp_path / run) for run in ("MC-LS/amrl-max", "MC-LS/set")}
    for folder, base in zip(folders.values(), (7.0, 6.8)):
        folder.prepare(config)
        for seed in (0, 1):  # two updates of 26 episodes (std 3.0) then 11 (std 2.0) per seed
            folder.append_metrics(
                seed,
                [
                    {"env_steps": 4000, "episode_return": base, "episode_return_std": 3.0, "episodes": 26},
                    {"env_steps": 8000, "episode_return": base + 1, "episode_return_std": 2.0, "episodes": 11},
                ],
            )
    training = mean_training_return(folders, tmp_path)["training"]
    seed_error = np.sqrt(3.0**2 / 25 + 2.0**2 / 10) / 2
    assert (
        training["MC-LS/set"]["standard_error"] == pytest.approx(seed_error / np.sqrt(2))
        and training["MC-LS/set"]["episodes"] == 74
    )
    outcome = learns_faster("MC-LS", "amrl-max", "set").outcome({}, {"training": training})
    assert outcome["passed"] and outcome["value"] == 7.5  # 0.2 above, but two seeds decide nothing
    assert not outcome["decided"] and outcome["per_seed"] == [7.5, 7.5] and outcome["against_per_seed"] == [7.3, 7.3]
    assert (
        "fewer than 3 seeds" in outcome["note"]
        and f"±{training['MC-LS/set']['standard_error']:.3f} over 74 episodes" in outcome["note"]
    )


def test_every_htm_agent_sees_each_step_in_its_window_or_its_store():
    """A window shorter than a chunk would leave the older steps of the open chunk unseen by both."""
    for name in experiments.base.with_presets():
        for preset in experiments.get(name).presets:
            for run, config in experiments.get(name, preset).runs.items():
                if config.core_name == "htm":
                    assert config.core.window >= config.core.chunk_size, (name, preset, run)


def test_frozen_returns_score_each_seeds_finished_episodes_with_and_without_memory(tmp_path):
    from memrl.experiments.evaluations import frozen_returns
    from memrl.learn.ppo_config import PPOConfig
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    config = PPOConfig(
        env=envs.make("tmaze/T-L", maze_length=4),
        core=cores.make("lstm", hidden=8),
        encoder_widths=(8,),
        head_widths=(8,),
        num_envs=2,
        rollout_len=4,
        num_minibatches=1,
        update_epochs=1,
        total_steps=8,
        seeds=2,
    )
    folder = RunFolder(tmp_path / "T-L/lstm")
    folder.prepare(config)
    train_seeds(config, folder, [0, 1])
    results = frozen_returns(num_steps=20)({"T-L/lstm": folder}, tmp_path)
    for table in ("returns", "returns_without_memory"):
        entry = results[table]["T-L/lstm"]
        assert (
            len(entry["per_seed"]) == 2 and entry["episodes"] == 2 * 2 * 5
        )  # seeds x envs x 4-step episodes in 20 steps
        assert entry["mean"] == pytest.approx(np.mean(entry["per_seed"])) and all(
            -3 <= v <= 4 for v in entry["per_seed"]
        )
    fewer = frozen_returns(num_steps=20, num_envs=1)({"T-L/lstm": folder}, tmp_path)
    assert fewer["returns"]["T-L/lstm"]["episodes"] == 2 * 1 * 5  # evaluated in 1 environment, not the run's 2
    by_level = frozen_returns(num_steps=20, levels=("tmaze/T-L",))({"T-L/lstm": folder}, tmp_path)
    for table in ("returns", "returns_without_memory", "memory_gain"):  # its own level, by name: as before
        assert by_level[table]["T-L/lstm"] == {"tmaze/T-L": results[table]["T-L/lstm"]}


def test_a_seed_solves_a_run_where_its_value_reaches_the_runs_level():
    from memrl.experiments.evaluations import seed_entry, solved_on_each_seed

    returns = {"T-L/r2d2": seed_entry([4.0, 3.4, 3.5]), "Easy/ppo": seed_entry([0.2, 0.7])}
    solved = solved_on_each_seed(returns, lambda run: {"T-L": 3.5, "Easy": 0.5}[run.split("/")[0]])
    assert {run: entry["per_seed"] for run, entry in solved.items()} == {
        "T-L/r2d2": [1.0, 0.0, 1.0],
        "Easy/ppo": [0.0, 1.0],
    }
    assert solved["T-L/r2d2"]["mean"] == pytest.approx(2 / 3)


def test_continuous_control_trains_a_memory_and_the_memoryless_control_alike_on_pendulum():
    """The three runs differ only in what they see and their core; the positions-only task hides the
    velocity (two of Pendulum's three observations); random play's level is the measured one; the
    central checks are the memoryless control's swing-up with the velocity and the LSTM above it from
    the positions."""
    from memrl.envs.scripted_policy import random_play_returns
    from memrl.experiments.continuous_control import RANDOM_PLAY

    experiment = experiments.get("continuous-control")
    assert experiment.kind == "benchmark"
    configs = experiment.runs
    assert {(c.env_name, c.core_name) for c in configs.values()} == {
        ("gymnax/Pendulum-v1/positions", "lstm"),
        ("gymnax/Pendulum-v1/positions", "memoryless"),
        ("gymnax/Pendulum-v1", "memoryless"),
    }
    settings = {name: value for name, value in vars(configs["full/memoryless"]).items() if name not in ("core", "env")}
    assert all({n: v for n, v in vars(c).items() if n not in ("core", "env")} == settings for c in configs.values())
    assert configs["positions/lstm"].env.observation_shape == (2,) and configs[
        "full/memoryless"
    ].env.observation_shape == (3,)
    assert {tuple(c.seed_list()) for c in configs.values()} == {(100, 101, 102)}  # fresh: the pilots took seed 0
    measured = float(random_play_returns(configs["full/memoryless"].env).mean())
    assert measured == pytest.approx(RANDOM_PLAY, abs=1.0)
    central = {(e.run, e.against, e.evaluated) for e in experiment.expectations if e.central}
    assert central == {
        ("full/memoryless", "", ("returns",)),
        ("positions/lstm", "positions/memoryless", ("returns",)),
    }
    assert {e.run for e in experiment.expectations if e.learning} == {"full/memoryless", "positions/lstm"}


def test_xminigrid_control_trains_the_memory_benchmarks_agent_and_needs_its_extra_only_when_asked(monkeypatch):
    """The run is the memory benchmark's GRU agent on MiniGrid-MemoryS8 in JAX with a wide batch, its cells one-hot; random play is far below
    a guess's return, which is below the solved level; without xminigrid the experiment says what to install."""
    from memrl.envs.scripted_policy import random_play_returns
    from memrl.experiments.xminigrid_control import GUESS, SOLVED

    experiment = experiments.get("xminigrid-control")
    (config,) = experiment.runs.values()
    assert (config.env_name, config.core.hidden, config.feed_prev_action) == ("xminigrid/MiniGrid-MemoryS8", 128, True)
    assert config.seed_list() == [100, 101, 102, 103, 104] and config.total_steps == 16_777_216
    assert (config.num_envs, config.rollout_len, config.num_minibatches) == (
        1024,
        16,
        16,
    )  # XLand-MiniGrid's wide batch
    assert config.env.one_hot and config.env.observation_shape == (3, 3, 25)  # categories, not numbers
    assert float(random_play_returns(config.env, episodes=64).mean()) < GUESS / 2 < GUESS < SOLVED
    assert {e.evaluated for e in experiment.expectations if e.central} == {("solved",), ("memory_gain",)}
    monkeypatch.setitem(sys.modules, "xminigrid", None)  # as where the extra is not installed
    with pytest.raises(ValueError, match=r'pip install "memrl\[xminigrid\]"'):
        experiments.get("xminigrid-control")


def test_craftax_control_trains_the_memory_benchmarks_agent_on_craftax_classic_and_needs_its_extra_only_when_asked(
    monkeypatch,
):
    """The run is the memory benchmark's GRU agent on Craftax-Classic with its optimistic resets, 1M
    steps on seeds apart from the pilot's; its one check, central and a learning check, is the final
    return above random play's; without craftax the experiment says what to install."""
    from memrl.experiments.craftax_control import RANDOM_PLAY

    experiment = experiments.get("craftax-control")
    (config,) = experiment.runs.values()
    assert experiment.kind == "benchmark"
    assert (config.env_name, config.env.resets, config.core_name, config.core.hidden, config.feed_prev_action) == (
        "craftax/Craftax-Classic-Symbolic-v1",
        4,
        "gru",
        128,
        True,
    )
    assert config.seed_list() == [100, 101, 102, 103, 104] and config.total_steps == 1_048_576  # the pilot: seed 0
    (check,) = experiment.expectations
    assert (check.op, check.threshold, check.evaluated, check.central, check.learning) == (
        ">",
        RANDOM_PLAY,
        (),
        True,
        True,
    )
    monkeypatch.setitem(sys.modules, "craftax.craftax_env", None)  # as where the extra is not installed
    with pytest.raises(ValueError, match=r'pip install "memrl\[craftax\]"'):
        experiments.get("craftax-control")


def test_htm_rl_control_trains_htm_as_amrl_tmaze_trains_its_models():
    control, tmaze = experiments.get("htm-rl-control"), experiments.get("amrl-tmaze", "cpu")
    assert control.kind == "benchmark" and all(c.seeds == 3 for c in control.runs.values())
    htm = held_settings(control.runs["T-L/htm-ppo"].core)
    assert htm["num_chunks"] * htm["chunk_size"] >= 100  # the store holds a whole T-maze episode
    for env in ("T-L", "T-LN"):
        assert control.runs[f"{env}/htm-ppo"] == dataclasses.replace(
            tmaze.runs[f"{env}/lstm"], core=cores.make("htm", **htm)
        )
    htm_vtrace, amrl_vtrace = control.runs["T-L/htm-vtrace"], control.runs["T-L/amrl-max-vtrace"]
    assert htm_vtrace.learner == "impala" and htm_vtrace.core_name == "htm" and held_settings(htm_vtrace.core) == htm
    # the V-trace path's positive control: AMRL-Max under the same V-trace, on seeds apart from the pilots'
    assert amrl_vtrace == dataclasses.replace(htm_vtrace, core=cores.make("amrl-max"))
    assert htm_vtrace.seed == 200 and htm_vtrace.lr == 1e-3  # the pilots' seeds were 0-1 and 100-102
    assert htm_vtrace.total_steps // (htm_vtrace.num_envs * htm_vtrace.rollout_len) == 2500  # gradient steps
    checked = {(e.run, e.evaluated) for e in control.expectations}
    assert checked == {(run, (table,)) for run in control.runs for table in ("returns", "returns_without_memory")}


def test_epn_settings_sweep_reads_reaching_the_explorer_as_two_one_sided_tests_on_three_fresh_seeds():
    from memrl.experiments.epn_settings_sweep import BAND, EXPLORER, V1_RUN

    experiment = experiments.get("epn-settings-sweep")
    assert (experiment.runs[V1_RUN].seeds, experiment.runs[V1_RUN].seed) == (3, 10)
    lower, upper = [e for e in experiment.expectations if e.central]
    assert (lower.op, upper.op) == (">=", "<=") and lower.run == upper.run == V1_RUN
    assert lower.threshold == pytest.approx(EXPLORER - BAND) and upper.threshold == pytest.approx(EXPLORER + BAND)
    summaries = lambda *finals: {
        V1_RUN: {"final_mean": np.mean(finals), "seeds": {str(i): {"final": v} for i, v in enumerate(finals)}}
    }
    at_the_level = summaries(10.58, 10.59, 10.78)  # the paper preset's three GPU seeds at 78M steps
    assert all(e.outcome(at_the_level, {})["decided"] for e in (lower, upper))
    below = summaries(8.3, 8.4, 8.2)
    assert not lower.outcome(below, {})["passed"] and upper.outcome(below, {})["decided"]


def test_epn_planning_imitation_clones_one_teacher_into_epn_and_the_lstm_for_equal_updates():
    from memrl.experiments.epn_planning_imitation import EPN_RUN, LSTM_RUN

    experiment = experiments.get("epn-planning-imitation")
    assert experiment.kind == "imitation analogue" and not experiment.analogue
    configs = experiment.runs
    assert all(c.teacher == "transition_planner" and c.env_name == "memory-planning/3x3" for c in configs.values())
    assert all(c.clone_updates == c.num_updates for c in configs.values())  # the teacher acts throughout
    epn = [run for run in configs if run.startswith("epn/")]
    assert [configs[run].core.capacity for run in epn] == [8, 24, 100] and configs[EPN_RUN].core.capacity == 100
    assert [configs[run].init_params for run in epn] == [None, *epn[:-1]]  # a curriculum, each from the one before
    assert sum(configs[run].num_updates for run in epn) == configs[LSTM_RUN].num_updates  # equal cloning budgets
    assert configs[LSTM_RUN].core_name == "lstm" and configs[LSTM_RUN].feed_prev_action
    seeds = {tuple(c.seed_list()) for c in configs.values()}
    assert seeds == {(300, 301, 302)}  # fresh: the pilot used 100, epn-rl-control 200-202
    central = {(e.run, e.against, e.op) for e in experiment.expectations if e.central}
    assert central == {(EPN_RUN, "", ">"), (LSTM_RUN, "", "<="), (EPN_RUN, LSTM_RUN, ">")}
    assert all(e.paired for e in experiment.expectations if e.against)
    assert experiment.evaluation is not None and not experiment.parts  # one sitting: the stages need parameters


def test_epn_rl_control_takes_the_lstm_along_epns_path_clone_then_the_same_v_trace_stages():
    """Version 2 (issue 84 §3): the LSTM clones the same teacher for as many updates as EPN's clones
    together, then takes V-trace stages of EPN's budget and settings, each from the stage before."""
    from memrl.experiments.epn_rl_control import VTRACE_STAGES, vtrace_stage

    configs = experiments.get("epn-rl-control").runs
    lstm_clone = configs["lstm/clone"]
    assert lstm_clone.teacher == "transition_planner" and lstm_clone.core_name == "lstm" and lstm_clone.feed_prev_action
    assert (
        lstm_clone.clone_updates
        == lstm_clone.num_updates
        == sum(configs[r].num_updates for r in configs if "clone" in r and r != "lstm/clone")
    )
    for i in range(1, VTRACE_STAGES + 1):
        epn, lstm = configs[vtrace_stage(i)], configs[vtrace_stage(i, "lstm")]
        assert lstm.init_params == ("lstm/clone" if i == 1 else vtrace_stage(i - 1, "lstm"))
        assert lstm.teacher is None and lstm.core_name == "lstm"
        same = ("total_steps", "num_envs", "rollout_len", "lr", "gamma", "entropy_coef", "seed", "seeds", "env")
        assert all(getattr(epn, f) == getattr(lstm, f) for f in same)


def test_amrl_minecraft_imitation_clones_the_oracle_into_the_six_memories_alike():
    experiment = experiments.get("amrl-minecraft-imitation")
    assert experiment.kind == "imitation analogue"
    configs = experiment.runs
    assert {c.core_name for c in configs.values()} == {"amrl-max", "amrl-avg", "set", "lstm", "lstm-stack", "dnc"}
    assert all(c.env_name == "minecraft-maze/MC-LSN" and c.teacher == "oracle" for c in configs.values())
    assert all(c.clone_updates == c.num_updates and c.clone_value_coef == 0.0 for c in configs.values())
    settings = {name: value for name, value in vars(configs["MC-LSN/lstm"]).items() if name != "core"}
    assert all({n: v for n, v in vars(c).items() if n != "core"} == settings for c in configs.values())  # alike
    assert {tuple(c.seed_list()) for c in configs.values()} == {(400, 401, 402, 403, 404)}  # fresh, 5 (0/1 outcomes)
    central = {(e.run, e.against) for e in experiment.expectations if e.central}
    assert central == {
        ("MC-LSN/amrl-max", ""),
        ("MC-LSN/amrl-max", "MC-LSN/lstm"),
        ("MC-LSN/amrl-max", "MC-LSN/lstm-stack"),
    }
    assert all(e.paired for e in experiment.expectations if e.against)
    assert [e.run for e in experiment.expectations if e.learning] == ["MC-LSN/amrl-max"]


def test_htm_pvm_imitation_clones_the_oracle_on_a_mix_of_delays_and_tests_each_fixed_delay():
    from memrl.experiments.htm_pvm_imitation import LONGEST, SHORTEST, TEST_DELAYS, fixed_delay_env

    experiment = experiments.get("htm-pvm-imitation")
    assert experiment.kind == "imitation analogue"
    configs = experiment.runs
    assert {c.core_name for c in configs.values()} == {"htm", "gtrxl", "lstm"}
    assert all(c.teacher == "oracle" and c.clone_updates == c.num_updates for c in configs.values())
    settings = {name: value for name, value in vars(configs["mixed/lstm"]).items() if name != "core"}
    assert all({n: v for n, v in vars(c).items() if n != "core"} == settings for c in configs.values())  # alike
    params = configs["mixed/htm"].env.params
    assert (params.shortest_distractor_seconds, params.distractor_seconds) == (SHORTEST, LONGEST)
    for delay in TEST_DELAYS:  # the same room, every distractor phase one length
        env = fixed_delay_env(delay)
        assert env.observation_shape == configs["mixed/htm"].env.observation_shape
        assert env.params.shortest_distractor_seconds is None and env.params.distractor_seconds == delay
    assert {tuple(c.seed_list()) for c in configs.values()} == {(500, 501, 502)}  # fresh: the pilots took seed 0
    central = {(e.run, e.against, e.evaluated) for e in experiment.expectations if e.central}
    long = ("fraction_correct", f"delay{TEST_DELAYS[1]}")  # the longest trained delay
    assert central == {("mixed/htm", "", long), ("mixed/htm", "mixed/lstm", long), ("mixed/htm", "mixed/gtrxl", long)}
    assert all(e.paired for e in experiment.expectations if e.against)
    assert [e.run for e in experiment.expectations if e.learning] == ["mixed/htm"]


def test_htm_word_learning_imitation_clones_the_oracle_on_one_move_tests_and_scores_each_level():
    from memrl.envs.word_learning import TIME_LIMIT
    from memrl.experiments.htm_word_learning_imitation import CENTRAL, POSITIVE_CONTROL, TEST_LEVELS

    experiment = experiments.get("htm-word-learning-imitation")
    assert experiment.kind == "imitation analogue" and experiment.keeps_results
    configs = experiment.runs
    assert {c.core_name for c in configs.values()} == {"htm", "gtrxl", "lstm"}
    assert all(c.teacher == "oracle" and c.clone_updates == c.num_updates for c in configs.values())
    settings = {name: value for name, value in vars(configs["train/lstm"]).items() if name != "core"}
    assert all({n: v for n, v in vars(c).items() if n != "core"} == settings for c in configs.values())  # alike
    env = configs["train/htm"].env
    assert (env.distractors, env.test_layout, env.observation) == ((0, 1, 2), "around", "cells")
    for level in TEST_LEVELS:  # each test level keeps the runs' layout and view
        tested = ENVS.variant(env, f"word-learning/{level}")
        assert (tested.test_layout, tested.observation) == ("around", "cells")
    htm = configs["train/htm"].core
    assert htm.num_chunks * (htm.chunk_size - htm.chunk_overlap) >= TIME_LIMIT  # the store holds an episode
    assert {tuple(c.seed_list()) for c in configs.values()} == {(500, 501, 502)}
    central = {(e.run, e.against, e.evaluated) for e in experiment.expectations if e.central}
    at = ("fraction_correct", CENTRAL)
    assert central == {("train/htm", "", at), ("train/htm", "train/lstm", at), ("train/htm", "train/gtrxl", at)}
    control = ("fraction_correct", POSITIVE_CONTROL)
    controls = {e.run for e in experiment.expectations if e.evaluated == control and not e.against}
    assert controls == {"train/htm", "train/gtrxl"}  # the paper's LSTMs fail even the training tasks (Fig. 11)
    assert [e.against for e in experiment.expectations if e.evaluated == control and e.against] == ["train/lstm"]
    assert all(e.paired for e in experiment.expectations if e.against)
    assert [e.run for e in experiment.expectations if e.learning] == ["train/htm"]


def barely_trained_clone(config, tmp_path, **smaller):
    """The run folder of ``config`` made tiny (two environments, one cloning update of 4 steps, one
    seed; ``smaller``: other config fields, a smaller core or encoder), trained."""
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    config = dataclasses.replace(config, num_envs=2, rollout_len=4, total_steps=8, clone_updates=1, seeds=1, **smaller)
    folder = RunFolder(tmp_path / "run")
    folder.prepare(config)
    train_seeds(config, folder, config.seed_list())
    return folder


def test_rmc_boxworld_imitation_clones_the_viewport_oracle_and_scores_solved_levels_of_each_size(tmp_path):
    """Both agents clone the teacher that sees only the viewport, alike but for their memory, on the
    smaller levels; a barely trained clone is scored 0/1 per finished level at the trained size and
    the paper's, with and without its memory; the central check is paired."""
    from memrl.experiments.rmc_boxworld_imitation import LEVEL, TEST_LEVELS, runs, solved_levels

    experiment = experiments.get("rmc-boxworld-imitation")
    assert experiment.kind == "imitation analogue" and experiment.keeps_results
    configs = experiment.runs
    assert {c.core_name for c in configs.values()} == {"rmc", "conv-lstm"}
    assert all(c.teacher == "viewport_oracle" and c.clone_updates == c.num_updates for c in configs.values())
    settings = {name: value for name, value in vars(configs["boxworld/rmc"]).items() if name != "core"}
    assert all({n: v for n, v in vars(c).items() if n != "core"} == settings for c in configs.values())
    assert {k: getattr(configs["boxworld/rmc"].env, k) for k in ("grid_size", "path_capacity")} == {
        "grid_size": LEVEL["grid_size"],
        "path_capacity": LEVEL["path_capacity"],
    }
    central = [(e.run, e.against, e.evaluated, e.paired) for e in experiment.expectations if e.central]
    assert central == [("boxworld/rmc", "boxworld/conv-lstm", ("fraction_correct", "trained"), True)]
    assert [e.run for e in experiment.expectations if e.learning] == ["boxworld/rmc"]

    config = runs()["boxworld/conv-lstm"]
    folder = barely_trained_clone(config, tmp_path, core=config.core.clone(channels=4), conv_channels=(2, 2))
    results = solved_levels({"boxworld/conv-lstm": folder}, tmp_path, steps=301)  # every level ends by 300 steps
    for table in ("fraction_correct", "fraction_correct_without_memory"):
        scored = results[table]["boxworld/conv-lstm"]
        assert set(scored) == set(TEST_LEVELS)
        assert all(0.0 <= e["correct"] <= 1.0 and e["episodes"] >= 2 for e in scored.values())


def test_htm_pvm_imitation_scores_the_right_choices_at_each_delay_with_and_without_memory(tmp_path):
    """A barely trained clone chooses in fresh episodes of each fixed delay (every one ends within 400
    steps: a 20 s distractor's episode is 390 long), scored 0/1 per finished episode; HTM's store
    holds the longest test episode."""
    from memrl.experiments.htm_pvm_imitation import TEST_DELAYS, right_choices, runs

    config = runs()["mixed/lstm"]
    folder = barely_trained_clone(
        config, tmp_path, core=config.core.clone(hidden=8), conv_channels=(2, 2, 2), head_widths=(8,)
    )
    assert runs()["mixed/htm"].core.num_chunks * 16 >= (1 + max(TEST_DELAYS) + 5) * 15
    results = right_choices({"mixed/lstm": folder}, tmp_path, steps=400)
    for table in ("fraction_correct", "fraction_correct_without_memory"):
        scored = results[table]["mixed/lstm"]
        assert set(scored) == {f"delay{d}" for d in TEST_DELAYS}
        assert all(
            0.0 <= e["correct"] <= 1.0 and e["episodes"] >= 2 and len(e["per_seed"]) == 1 for e in scored.values()
        )


def test_r2d2_control_trains_pqn_beside_r2d2_on_each_task_with_its_core_and_steps():
    """Version 3's PQN runs: each task's core, encoder, head and seeds, R2D2's environment steps
    (T-L rounded down to whole updates), the pilots' learning rate on RepeatPreviousEasy; not central."""
    experiment = experiments.get("r2d2-control")
    for task in ("T-L", "RepeatPreviousEasy"):
        pqn, r2d2 = experiment.runs[f"{task}/pqn"], experiment.runs[f"{task}/r2d2"]
        assert (pqn.learner, pqn.layer_norm, pqn.seed_list()) == ("pqn", True, r2d2.seed_list())
        assert (pqn.env, pqn.core, pqn.encoder_widths, pqn.head_widths) == (
            r2d2.env,
            r2d2.core,
            r2d2.encoder_widths,
            r2d2.head_widths,
        )
        assert r2d2.total_steps - pqn.steps_per_update < pqn.total_steps <= r2d2.total_steps
        assert not any(e.central for e in experiment.expectations if e.run == f"{task}/pqn")
    assert (experiment.runs["T-L/pqn"].lr, experiment.runs["RepeatPreviousEasy/pqn"].lr) == (1e-3, 3e-4)
