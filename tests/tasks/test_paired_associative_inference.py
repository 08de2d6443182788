from types import SimpleNamespace

import jax
import numpy as np
import pytest

from memrl import tasks
from memrl.tasks.paired_associative_inference import PairedAssociativeInference


def trials(task: PairedAssociativeInference, key, batch_size: int, split: str = "train") -> SimpleNamespace:
    """A batch of ``batch_size`` trials, its parts by name; the hops from the batch's kinds of query."""
    batch = task.with_batch_size(batch_size).sample(key, split)
    assert batch.targets.shape == batch.target_mask.shape == (1, batch_size) and batch.target_mask.all(), (
        "one scored step"
    )
    assert set(batch.kinds) == ({"direct", "indirect"} if task.chain_length > 2 else {"direct"})
    hops = np.where(batch.kinds["direct"], 1, task.chain_length - 1)
    return SimpleNamespace(**batch.inputs._asdict(), label=np.asarray(batch.targets[0]), hops=hops, kinds=batch.kinds)


def ids(batch_part, pool):
    """Pool indices of the stimuli in ``batch_part`` [..., D]."""
    matches = np.all(np.asarray(batch_part)[..., None, :] == np.asarray(pool), axis=-1)
    assert np.all(matches.sum(-1) == 1), "every stimulus comes from the pool, exactly once"
    return matches.argmax(-1)


def follow(pairs: np.ndarray, start: int, hops: int) -> int:
    """Follow stored pairs (first -> second) ``hops`` times; -1 where no pair leads on."""
    item = start
    for _ in range(hops):
        nxt = pairs[pairs[:, 0] == item, 1]
        if len(nxt) != 1:
            return -1
        item = int(nxt[0])
    return item


def chain_of(pairs: np.ndarray, item: int) -> list[int]:
    """The whole chain through ``item``, from its first stimulus to its last."""
    while (pairs[:, 1] == item).any():
        item = int(pairs[pairs[:, 1] == item, 0][0])
    chain = [item]
    while (pairs[:, 0] == chain[-1]).any():
        chain.append(int(pairs[pairs[:, 0] == chain[-1], 1][0]))
    return chain


@pytest.mark.parametrize("length, stored", [(2, 0), (3, 0), (4, 0), (3, 2), (4, 3)])
def test_trials_need_exactly_the_chain_of_pairs(length, stored):
    task = PairedAssociativeInference(
        num_chains=5, chain_length=length, stimulus_dim=16, pool_size=100, stored_chains=stored
    )
    batch = trials(task, jax.random.PRNGKey(length), 64)
    pool = task.stimuli("train")
    assert batch.memory.shape == (64, 5 * (length - 1), 2, 16) and batch.memory_mask.shape == (64, 5 * (length - 1))
    assert batch.query.shape == (64, 16) and batch.choices.shape == (64, 2, 16) and batch.label.shape == (64,)
    np.testing.assert_array_equal(batch.hops, [1] * 32 + [length - 1] * 32)  # MEMO: half direct, half indirect
    chains = stored or 5
    np.testing.assert_array_equal(batch.memory_mask.sum(-1), chains * (length - 1))
    memory, query, choices = ids(batch.memory, pool), ids(batch.query, pool), ids(batch.choices, pool)
    links = set()
    for b in range(64):
        pairs = memory[b][np.asarray(batch.memory_mask[b])]  # cue, match and lure must be found among the stored pairs
        assert len(np.unique(pairs)) == chains * length, "the stored chains use distinct stimuli"
        match, lure = choices[b, batch.label[b]], choices[b, 1 - batch.label[b]]
        cue_chain, lure_chain = chain_of(pairs, query[b]), chain_of(pairs, lure)
        assert len(cue_chain) == len(lure_chain) == length and cue_chain != lure_chain, (
            "the lure is in another stored chain"
        )
        cue_at = cue_chain.index(query[b])
        assert follow(pairs, query[b], int(batch.hops[b])) == match, "the match is where the cue's pairs lead"
        assert lure_chain.index(lure) == cue_at + batch.hops[b], "the lure stands in the match's place"
        if b < 32:
            links.add(cue_at)
        else:
            assert cue_at == 0 and match == cue_chain[-1], "an indirect query spans the whole chain"
    assert links == set(range(length - 1)), "direct queries ask for every link of a chain"
    assert 0.3 < np.mean(batch.label) < 0.7, "the match's position is random"


def test_storing_every_chain_is_the_default():
    key = jax.random.PRNGKey(4)
    default = PairedAssociativeInference(num_chains=4, stimulus_dim=16, pool_size=100, batch_size=8).sample(key)
    every = PairedAssociativeInference(
        num_chains=4, stimulus_dim=16, pool_size=100, stored_chains=4, batch_size=8
    ).sample(key)
    jax.tree.map(np.testing.assert_array_equal, default, every)
    default = default.inputs
    assert default.memory_mask.all()


def test_sampling_is_deterministic_and_splits_are_disjoint():
    task = PairedAssociativeInference(num_chains=4, stimulus_dim=32, pool_size=200, batch_size=8)
    a, b = task.sample(jax.random.PRNGKey(0)), task.sample(jax.random.PRNGKey(0))
    jax.tree.map(np.testing.assert_array_equal, a, b)
    train, test = np.asarray(task.stimuli("train")), np.asarray(task.stimuli("test"))
    np.testing.assert_allclose(np.linalg.norm(train, axis=-1), 1.0, rtol=1e-6)
    assert not (train[:, None] == test[None]).all(-1).any(), "no test stimulus is a training stimulus"
    test_batch = task.sample(jax.random.PRNGKey(0), "test")
    ids(test_batch.inputs.memory, test)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_chains=1), "num_chains must be >= 2"),
        (dict(chain_length=1), "chain_length must be >= 2"),
        (dict(num_chains=10, chain_length=3, pool_size=20), "pool_size"),
        (dict(direct_fraction=1.5), r"direct_fraction must be in \[0, 1\]"),
        (
            dict(num_chains=4, stored_chains=1),
            r"stored_chains must be 0 \(all\) or between 2 and num_chains \(4\), got 1",
        ),
        (dict(num_chains=4, stored_chains=5), "stored_chains must be 0"),
        (dict(batch_size=0), "batch_size must be a positive integer"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PairedAssociativeInference(**kwargs)


def test_registry_and_bad_split():
    assert "pai" in tasks.names()
    with pytest.raises(ValueError, match="unknown task"):
        tasks.make("pia")
    with pytest.raises(ValueError, match="split must be one of"):
        tasks.make("pai", batch_size=2).sample(jax.random.PRNGKey(0), "validation")
