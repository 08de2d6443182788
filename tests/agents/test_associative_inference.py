"""HTM on PAI (App. B.4): the answer does not depend on where pairs sit in the store, the scores
follow the choices, and slots the trial leaves empty are never read."""

import jax
import numpy as np

from memrl.agents.associative_inference import HTMAssociativeInference
from memrl.tasks.paired_associative_inference import PairedAssociativeInference


def test_logits_ignore_memory_order_and_follow_the_choices():
    task = PairedAssociativeInference(num_chains=4, stimulus_dim=16, pool_size=100, batch_size=5)
    batch = task.sample(jax.random.PRNGKey(0)).inputs
    model = HTMAssociativeInference(num_layers=2, d_model=32, num_heads=4, mlp_dim=32, k=3)
    params = model.init(jax.random.PRNGKey(1), batch)
    logits = model.apply(params, batch)
    assert logits.shape == (1, 5, 2), "one step"
    order = jax.random.permutation(jax.random.PRNGKey(2), batch.memory.shape[1])
    shuffled = model.apply(params, batch._replace(memory=batch.memory[:, order]))
    np.testing.assert_allclose(shuffled, logits, rtol=1e-5, atol=1e-5)
    swapped = model.apply(params, batch._replace(choices=batch.choices[:, ::-1]))
    np.testing.assert_allclose(swapped, logits[..., ::-1], rtol=1e-6, atol=1e-6)


def test_unstored_slots_are_never_read():
    task = PairedAssociativeInference(num_chains=4, stimulus_dim=16, pool_size=100, stored_chains=2, batch_size=5)
    batch = task.sample(jax.random.PRNGKey(0)).inputs
    model = HTMAssociativeInference(num_layers=2, d_model=32, num_heads=4, mlp_dim=32, k=6)  # k > the 4 stored pairs
    params = model.init(jax.random.PRNGKey(1), batch)
    logits = model.apply(params, batch)
    noise = jax.random.normal(jax.random.PRNGKey(2), batch.memory.shape)
    empty = ~batch.memory_mask[:, :, None, None]
    rewritten = model.apply(params, batch._replace(memory=np.where(empty, noise, batch.memory)))
    np.testing.assert_allclose(rewritten, logits, rtol=1e-6, atol=1e-6)
    unmasked = model.apply(params, batch._replace(memory_mask=np.ones_like(batch.memory_mask)))
    assert not np.allclose(unmasked, logits, atol=1e-3), "the same memory read whole answers differently"
