"""The supervised learner: its loss and accuracies against NumPy, config errors, determinism,
curriculum stages, per-kind scoring, and learning checks."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import LEARNING_SEEDS, optimised, supervised_params_over_seeds, trained_scores

from memrl import cores, tasks
from memrl.agents.supervised_models import TASK_MODELS
from memrl.learn.supervised import SupervisedLearner, accuracies, sequence_loss
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run.config_upgrade import upgrade
from memrl.tasks.base import SequenceBatch

SMALL_PAI_MODEL = {"num_layers": 1, "d_model": 16, "num_heads": 2, "mlp_dim": 16, "k": 2}
SMALL_PAI = {"num_chains": 3, "stimulus_dim": 8, "pool_size": 50}


def pai_config(model: dict | None = None, task: dict | None = None, **kwargs) -> SupervisedConfig:
    """The small PAI model on the small PAI task, with ``model`` and ``task`` settings over theirs."""
    return SupervisedConfig(
        **{
            "task": tasks.make("pai", **{**SMALL_PAI, **(task or {})}),
            "core": TASK_MODELS.make("htm-pai", **{**SMALL_PAI_MODEL, **(model or {})}),
            "batch_size": 8,
            **kwargs,
        }
    )


def test_loss_and_accuracies_match_numpy():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4, 3, 5)).astype(np.float32)  # [T, B, C]
    targets = rng.integers(0, 5, (4, 3))
    targets[:, 0] = logits[:, 0].argmax(-1)  # sequence 0 right everywhere
    mask = np.array([[0, 0, 1], [1, 1, 1], [1, 0, 0], [1, 1, 0]], bool)
    batch = SequenceBatch(
        jnp.zeros((4, 3)), jnp.asarray(targets), jnp.asarray(mask), {"even": jnp.array([True, False, True])}
    )
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -sum(log_p[t, b, targets[t, b]] for t in range(4) for b in range(3) if mask[t, b]) / mask.sum()
    np.testing.assert_allclose(sequence_loss(jnp.asarray(logits), batch, "classes"), expected, rtol=1e-5)
    right = logits.argmax(-1) == targets
    scores = accuracies(jnp.asarray(logits), batch, "classes", "sequence")
    assert float(scores["token_accuracy"]) == pytest.approx((right & mask).sum() / mask.sum())
    whole = [all(right[t, b] for t in range(4) if mask[t, b]) for b in range(3)]
    assert (
        float(scores["sequence_accuracy"]) == pytest.approx(np.mean(whole))
        and scores["accuracy"] == scores["sequence_accuracy"]
    )
    assert float(scores["accuracy_even"]) == pytest.approx((whole[0] + whole[2]) / 2)
    assert accuracies(jnp.asarray(logits), batch, "classes", "token")["accuracy"] == scores["token_accuracy"]


def test_bit_targets_score_a_step_right_only_when_every_bit_is():
    logits = jnp.array([[[2.0, -1.0]], [[1.0, 1.0]]])  # [T=2, B=1, bits=2]
    batch = SequenceBatch(jnp.zeros((2, 1)), jnp.array([[[1.0, 0.0]], [[1.0, 0.0]]]), jnp.ones((2, 1), bool))
    assert float(accuracies(logits, batch, "bits", "token")["token_accuracy"]) == 0.5
    p = jax.nn.sigmoid(logits)
    expected = -np.mean(np.log(np.where(batch.targets > 0.5, p, 1 - p)))
    np.testing.assert_allclose(sequence_loss(logits, batch, "bits"), expected, rtol=1e-5)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            lambda: dict(task=tasks.make("copyin")),
            "unknown task 'copyin'; did you mean 'copying'\\? known: babyai, copying",
        ),
        (
            lambda: dict(core=cores.make("lstmm")),
            "unknown core 'lstmm'; did you mean 'lstm'.*\\? \\(`memrl list` names all",
        ),
        (dict(core=cores.make("epn")), "takes named inputs"),
        (dict(task=tasks.make("pai")), "task 'pai'.s inputs are 'trials': train it with a task model \\(htm-pai\\)"),
        (dict(core=TASK_MODELS.make("htm-pai")), "task model 'htm-pai' reads only the task\\(s\\) pai, not 'copying'"),
        (
            dict(task=tasks.make("pai"), core=TASK_MODELS.make("htm-pai"), embed_dim=32),
            "embed_dim, head_widths, readout, unroll_length set the sequence model",
        ),
        (dict(readout="pooled"), r"readout must be one of \('steps', 'state'\), got 'pooled'"),
        (
            dict(task=tasks.make("digits"), readout="state"),
            'readout "state" reads the core.s final state vectors; core LSTM has none',
        ),
        (dict(task=tasks.make("digits"), core=cores.make("transformer"), readout="state"), "has none"),
        (dict(core=cores.make("tlb"), readout="state"), "task 'copying' is scored at other steps too"),
        (lambda: dict(core=cores.make("lstm", layers=2)), "core 'lstm' has no setting 'layers'"),
        (lambda: dict(task=tasks.make("copying", gap=0)), "gap must be a positive integer"),
        (dict(batch_size=0), "batch_size must be a positive integer"),
        (dict(embed_dim=0), "embed_dim must be a positive integer"),
        (dict(head_widths=(8, 0)), "head_widths must be positive integers"),
        (dict(lr=0.0), "lr must be > 0"),
        (dict(lr_warmup=-1), "lr_warmup must be >= 0"),
        (dict(weight_decay=-0.1), "weight_decay must be >= 0"),
        (dict(unroll_length=-4), "unroll_length must be >= 0"),
        (
            dict(task=tasks.make("pai"), core=TASK_MODELS.make("htm-pai"), unroll_length=16),
            "unroll_length set the sequence model",
        ),
        (dict(total_steps=16, batch_size=32), "less than one update \\(32 sequences\\)"),
        (dict(stages=("gap=3",)), r"'UPDATES key=value ...'.*UPDATES must be a positive integer"),
        (dict(stages=("0 gap=3",)), "UPDATES must be a positive integer"),
        (dict(stages=("10 gap",)), "'gap' is not key=value"),
        (dict(stages=("10 gap=2 gap=4",)), "'gap' is set twice"),
        (dict(stages=("10 gap=4",)), r"stage '10 gap=4' changes the shapes of the batches"),
        (dict(stages=("10 gap=-1",)), r"stage '10 gap=-1': .*gap must be a positive integer"),
        (dict(stages=("10 gapp=2",)), r"no setting 'gapp' \(--stages '10 gapp=2'\); its settings: "),
        (
            dict(stages=("20 num_digits=10", "12 num_digits=10"), total_steps=32 * 32),
            "the stages take 32 of the run's 32 updates",
        ),
    ],
)
def test_bad_config_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SupervisedConfig(**(kwargs() if callable(kwargs) else kwargs)).validate()


def test_weight_decay_is_decoupled_from_the_gradient():
    """AdamW: with a zero gradient a weight w still shrinks by lr * decay * w per step; Adam leaves it."""
    import jax.numpy as jnp

    from memrl.learn.optimizers import make_optimizer

    params = jnp.full(2, 3.0)
    for decay, expected in ((0.5, -0.1 * 0.5 * 3.0), (0.0, 0.0)):
        optimizer = make_optimizer(0.1, max_grad_norm=1e9, weight_decay=decay)
        updates, _ = optimizer.update(jnp.zeros(2), optimizer.init(params), params)
        np.testing.assert_allclose(updates, expected, atol=1e-7)
    with pytest.raises(ValueError, match="weight_decay is AdamW's"):
        make_optimizer(0.1, 1.0, kind="rmsprop", weight_decay=0.1)


def test_runs_are_deterministic_count_sequences_and_score_held_out_batches_per_chunk():
    learner = SupervisedLearner(
        SupervisedConfig(task=tasks.make("copying", gap=2), core=cores.make("lstm", hidden=8), batch_size=8)
    )
    run = jax.jit(learner.run, static_argnums=1)
    (a, metrics), (b, _) = run(learner.init(jax.random.PRNGKey(3)), 3), run(learner.init(jax.random.PRNGKey(3)), 3)
    jax.tree.map(np.testing.assert_array_equal, a.params, b.params)
    np.testing.assert_array_equal(metrics["sequences"], [8, 16, 24])
    assert np.all((0 <= metrics["token_accuracy"]) & (metrics["token_accuracy"] <= 1)) and np.all(
        np.isfinite(metrics["loss"])
    )
    held_out = np.asarray(metrics["test_token_accuracy"])
    assert np.isnan(held_out[:2]).all() and 0 <= held_out[2] <= 1, "held-out accuracy on the chunk's last row only"
    evaluated = learner.evaluate(a.params, jax.random.PRNGKey(0), 16)
    assert set(evaluated) == {"accuracy", "token_accuracy", "sequence_accuracy"}


def test_stages_train_on_their_own_task_settings_in_order_then_on_the_task():
    config = pai_config(
        task={"num_chains": 4, "direct_fraction": 0.0},
        stages=("2 direct_fraction=1.0 stored_chains=2", "1 stored_chains=3"),
    )
    assert config.curriculum == ((2, {"direct_fraction": 1.0, "stored_chains": 2}), (1, {"stored_chains": 3}))
    learner = SupervisedLearner(config)
    batch = jax.jit(learner.training_batch)
    batches = [batch(jax.random.PRNGKey(0), update) for update in range(5)]
    np.testing.assert_array_equal([b.kinds["direct"][0] for b in batches], [True, True, False, False, False])
    np.testing.assert_array_equal([b.inputs.memory_mask[0].sum() for b in batches], [4, 4, 6, 8, 8])


def test_a_record_with_a_warm_up_reads_as_one_stage():
    """Run folders written before the stages hold ``warmup_updates`` and ``warmup_task_args``."""
    record = json.loads(pai_config().to_json())
    del record["stages"]
    warmed = record | {"warmup_updates": 2000, "warmup_task_args": {"direct_fraction": 1.0}}
    warmed = SupervisedConfig.from_dict(upgrade(SupervisedConfig, warmed))
    assert warmed.stages == ("2000 direct_fraction=1.0",) and warmed.curriculum == ((2000, {"direct_fraction": 1.0}),)
    unwarmed = record | {"warmup_updates": 0, "warmup_task_args": {}}
    assert SupervisedConfig.from_dict(upgrade(SupervisedConfig, unwarmed)).stages == ()


def test_pai_accuracy_is_scored_per_kind_of_query():
    learner = SupervisedLearner(pai_config())
    accuracy = jax.jit(learner.evaluate, static_argnums=2)(
        learner.init(jax.random.PRNGKey(0)).params, jax.random.PRNGKey(1), 200
    )
    assert set(accuracy) == {"accuracy", "token_accuracy", "sequence_accuracy", "accuracy_direct", "accuracy_indirect"}
    assert float(accuracy["accuracy"]) == pytest.approx(
        (float(accuracy["accuracy_direct"]) + float(accuracy["accuracy_indirect"])) / 2
    ), "half of each kind"


def test_a_curriculum_that_follows_learning_moves_up_after_held_out_evaluations():
    """Learning to Execute's naive curriculum: the learner carries its state and hands it each chunk's held-out loss."""
    config = SupervisedConfig(
        task=tasks.make(
            "learn-to-execute",
            program="addition",
            max_length=3,
            max_nesting=1,
            curriculum="naive",
            min_tries=1,
            loss_threshold=1e9,
            programs_per_level=8,
            test_programs=4,
        ),
        core=cores.make("lstm", hidden=8),
        embed_dim=8,
        batch_size=4,
    )
    learner = SupervisedLearner(config)
    run = jax.jit(learner.run, static_argnums=1)
    state = learner.init(jax.random.PRNGKey(0))
    lengths, recorded = [], []
    for _ in range(3):
        state, metrics = run(state, 1)
        lengths.append(int(state.task_state["length"]))
        recorded.append(int(metrics["curriculum_length"][0]))
    assert lengths == [2, 3, 3], "a threshold nothing misses: one level per evaluation, up to the target"
    assert recorded == [1, 2, 3], "each update records the level it trained at"


def direct_recall_and_chunk_selection(updates: int, seeds: int = LEARNING_SEEDS) -> tuple[np.ndarray, np.ndarray]:
    """A one-layer HTM (k = 2) trained ``updates`` updates on chains of 2 (4 chains, so 4 stored pairs)
    from each of ``seeds`` seeds (vmapped): per seed, its held-out accuracy and how often its top
    chunk is the cue's own pair, on 512 held-out trials."""
    config = pai_config(
        model={"num_layers": 1, "d_model": 64, "mlp_dim": 128, "k": 2},
        task={"chain_length": 2, "num_chains": 4, "stimulus_dim": 32},
        lr=1e-3,
        batch_size=32,
    )
    learner = SupervisedLearner(config)
    params = supervised_params_over_seeds(learner, updates, seeds)
    batch = config.task.with_batch_size(512).sample(jax.random.PRNGKey(5), "test")
    trial, target = batch.inputs, np.asarray(batch.targets)[0]
    # the stored pair (A, B) of each trial's cue A: the query is A itself
    cue_pair = np.argmax(np.einsum("bd,bmd->bm", trial.query, trial.memory[:, :, 0]), axis=1)
    accuracy, cue_first = [], []
    for seed in range(seeds):
        logits, found = learner.model.apply(jax.tree.map(lambda x: x[seed], params), trial, mutable=["intermediates"])
        relevance = np.asarray(found["intermediates"]["memory_attention_0"]["chunk_relevance"][0])[:, 0]
        accuracy.append((np.argmax(np.asarray(logits)[0], axis=-1) == target).mean())
        cue_first.append((relevance.argmax(axis=1) == cue_pair).mean())
    return np.array(accuracy), np.array(cue_first)


@pytest.mark.slow
def test_one_layer_htm_recalls_held_out_pairs_or_is_trapped_rejecting_the_lure():
    """Chains of 2 (recall B from A; the lure is another chain's B, also in memory): one chunk read
    suffices. After 600 updates each seed is in one of two states (8 seeds, 2026-12-07: 4 and 4):
    it selects the cue's own pair first (0.91-0.96 of trials) and recalls (0.94-0.97), or its
    selection avoids the cue's pair (first on 0.06-0.08 of trials, below the 0.25 of chance) and it
    scores 0.59-0.62 by reading other pairs and rejecting the lure where it finds it (a strategy worth
    at most 2/3 + 1/3 · 1/2 = 0.83). Which one mostly follows the sign of the cue's pair's initial
    relevance against the others' (3 of the 4 trapped seeds started below, 3 of the 4 that recall
    above; docs/results/htm.md, "A lure-rejection trap"). Seeds 0 and 2 of these three recall, seed 1
    is trapped."""
    accuracy, cue_first = optimised(direct_recall_and_chunk_selection, 600)
    recalls = (accuracy >= 0.9) & (cue_first >= 0.8)
    trapped = (cue_first < 0.25) & (0.55 <= accuracy) & (accuracy <= 0.84)
    assert np.all(recalls | trapped), (accuracy, cue_first)
    assert recalls.any(), (accuracy, cue_first)


@pytest.mark.slow
def test_an_lstm_learns_nth_farthests_rank_0_shortcut_with_4_vectors_of_4_dims():
    """Uniform chance is 1/4; rank 0 answers the reference itself, whose id every row carries, so a
    model that reads the query scores 2/N = 0.5 without comparing distances: measured 0.51 after 500
    updates, 0.51-0.54 up to 4000 (docs/results.md). Above 0.4: it reads the reference and the rank;
    scored per rank, rank 0 is right and the ranks above it stay near the shortcut's 1/(N-1)."""
    accuracy = optimised(
        trained_scores,
        SupervisedConfig(
            task=tasks.make("nth-farthest", num_objects=4, num_features=4),
            core=cores.make("lstm", hidden=128),
            head_widths=(128, 128),
            batch_size=256,
            lr=1e-3,
        ),
        500,
    )
    assert np.all(accuracy["accuracy"] >= 0.4), accuracy
    assert np.all(accuracy["accuracy_rank0"] >= 0.8) and np.all(accuracy["accuracy_beyond_rank0"] <= 0.45), accuracy


def test_the_unroll_length_reaches_the_sequence_model_and_the_record():
    config = SupervisedConfig(unroll_length=8).validate()
    assert config.model.unroll_length == 8
    assert SupervisedConfig.from_dict(config.record()).unroll_length == 8
