"""The sequence model's state readout (TLB's image classifier, Didolkar et al. 2022, Sec. 3.1)."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores
from memrl.agents.sequence_model import SequenceModel

SIZES = dict(chunk_size=3, num_state=2, d_model=8, num_heads=2, mlp_dim=12)
XS = jax.random.normal(jax.random.PRNGKey(1), (9, 2, 5))  # 3 chunks of 3 steps, 2 sequences


def model_and_params(readout, **settings):
    model = SequenceModel(cores.make("tlb", **SIZES, **settings), "vectors", 5, 4, embed_dim=6, readout=readout)
    return model, jax.jit(model.init)(jax.random.PRNGKey(0), XS)


@pytest.mark.parametrize("state_reads", ["top-down", "own-layer"])
def test_the_state_readout_is_the_head_on_the_mean_of_the_final_state_vectors(state_reads):
    model, params = model_and_params("state", state_reads=state_reads, num_reads=2, self_per_read=1)
    logits = jax.jit(model.apply)(params, XS)
    p = params["params"]
    embedded = nn.Dense(6).apply({"params": p["embedding"]}, XS)
    carry, _ = model.core.apply({"params": p["core"]}, embedded, method=model.core.sequence)
    pooled = carry["state"].reshape(2, -1, 8).mean(1)  # own-layer: [B, reads, N, D], every vector counts
    expected = nn.Dense(4).apply({"params": p["output"]}, pooled)
    for t in range(9):
        np.testing.assert_allclose(logits[t], expected, atol=1e-5)


def test_without_past_reads_only_the_state_readout_sees_the_first_chunk():
    """Table 2's "no past info" ablation: the perceptual module never reads the state, yet the
    state summarises every chunk, so the paper's classifier (reading the state) still sees the
    whole image, while a readout of the last step sees only the last chunk."""
    reach = {}
    for readout in ("steps", "state"):
        model, params = model_and_params(readout, state_reads="none")
        grad = jax.jit(jax.grad(lambda xs: model.apply(params, xs)[-1].sum()))(XS)
        reach[readout] = float(jnp.abs(grad[:3]).sum())
    assert reach == {"steps": 0.0, "state": pytest.approx(reach["state"])} and reach["state"] > 1e-6


def test_the_state_readout_takes_no_resets():
    model, params = model_and_params("state")
    with pytest.raises(ValueError, match="takes no resets"):
        model.apply(params, XS, jnp.zeros(XS.shape[:2], bool))
