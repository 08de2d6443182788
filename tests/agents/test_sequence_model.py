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


TRUNCATED_CORES = {
    "lstm": cores.make("lstm", hidden=8),
    "gtrxl": cores.make("gtrxl", num_layers=1, d_model=8, num_heads=2, mlp_dim=12, memory_length=16),
    "htm": cores.make(
        "htm", num_layers=1, d_model=8, num_heads=2, mlp_dim=12, chunk_size=2, window=2, num_chunks=5, k=2
    ),
}
"""HTM reads its store without gradient (Lampinen et al. 2021, Sec. 2) even within a segment: only its
window of 2 steps is a gradient path to the past"""


@pytest.mark.parametrize("name", TRUNCATED_CORES)
def test_truncated_backpropagation_keeps_the_outputs_and_cuts_the_gradient_at_segment_ends(name):
    """``unroll_length`` 4 on 9 steps: segments [0, 4), [4, 8), [8, 9). The logits are the whole
    sequence's; step 7's gradient reaches back as far as the whole sequence's does within its own
    segment and no earlier."""
    whole = SequenceModel(TRUNCATED_CORES[name], "vectors", 5, 4, embed_dim=6)
    truncated = SequenceModel(TRUNCATED_CORES[name], "vectors", 5, 4, embed_dim=6, unroll_length=4)
    params = jax.jit(whole.init)(jax.random.PRNGKey(0), XS)
    np.testing.assert_allclose(jax.jit(truncated.apply)(params, XS), jax.jit(whole.apply)(params, XS), atol=1e-5)
    reach = {}
    for label, model in (("whole", whole), ("truncated", truncated)):
        grad = jax.jit(jax.grad(lambda xs, model=model: model.apply(params, xs)[7].sum()))(XS)
        reach[label] = np.abs(np.asarray(grad)).sum(axis=(1, 2)) > 1e-7
    first = 0 if name != "htm" else 5  # HTM: its window (steps 5, 6) and the step itself
    assert reach["whole"][first:8].all() and not reach["whole"][8:].any()
    assert reach["truncated"][max(first, 4) : 8].all() and not reach["truncated"][:4].any()
    assert not reach["truncated"][8:].any()


def test_truncated_backpropagation_refuses_a_negative_length_and_the_state_readout():
    with pytest.raises(ValueError, match="unroll_length is steps per segment"):
        SequenceModel(TRUNCATED_CORES["lstm"], "vectors", 5, 4, unroll_length=-1)
    with pytest.raises(ValueError, match="give unroll_length 0"):
        SequenceModel(cores.make("tlb", **SIZES), "vectors", 5, 4, readout="state", unroll_length=3)
