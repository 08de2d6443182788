"""HTM on PAI (App. B.4): the answer does not depend on where pairs sit in the store, and the
scores follow the choices."""

import jax
import numpy as np

from memrl.agents.associative_inference import HTMAssociativeInference
from memrl.tasks.paired_associative_inference import PairedAssociativeInference


def test_logits_ignore_memory_order_and_follow_the_choices():
    task = PairedAssociativeInference(num_chains=4, stimulus_dim=16, pool_size=100)
    batch = task.sample(jax.random.PRNGKey(0), 5)
    model = HTMAssociativeInference(num_layers=2, d_model=32, num_heads=4, mlp_dim=32, k=3)
    params = model.init(jax.random.PRNGKey(1), batch)
    logits = model.apply(params, batch)
    assert logits.shape == (5, 2)
    order = jax.random.permutation(jax.random.PRNGKey(2), batch.memory.shape[1])
    shuffled = model.apply(params, batch._replace(memory=batch.memory[:, order]))
    np.testing.assert_allclose(shuffled, logits, rtol=1e-5, atol=1e-5)
    swapped = model.apply(params, batch._replace(choices=batch.choices[:, ::-1]))
    np.testing.assert_allclose(swapped, logits[:, ::-1], rtol=1e-6, atol=1e-6)
