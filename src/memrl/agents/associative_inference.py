"""HTM applied to Paired Associative Inference (Lampinen et al. 2021, App. B.4).

Every stored pair is one chunk of two rows, the embedded stimuli, keyed by their mean (slots the
trial leaves empty are masked out). The embedded query passes through ``num_layers`` memory
layers that all read this same store:

    Z  = X + HCA(LN(X), store)          top-k chunk attention (nn/hierarchical_attention)
    X' = Z + MLP(LN(Z))

then it is mean-pooled, layer-normalised, projected, and scored against each embedded choice by a dot product; the
logits (one step, T = 1, as the task's batches have) train with softmax cross-entropy. One layer can fetch B from (A, B); reaching C from A
takes a second read with B, so a single layer is the control that cannot infer.
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from memrl.nn.hierarchical_attention import HierarchicalMemoryAttention
from memrl.tasks.paired_associative_inference import PAITrial


class HTMAssociativeInference(nn.Module):
    num_layers: int = 2
    d_model: int = 128
    num_heads: int = 4
    mlp_dim: int = 256
    k: int = 4
    """chunks (pairs) read per query"""

    tasks = ("pai",)

    @nn.compact
    def __call__(self, batch: PAITrial):
        """trials [B] -> logits [1, B, 2] (one step)."""
        dense, norm = nn.Dense(self.d_model, name="stimulus_embedding"), nn.LayerNorm(name="embedding_norm")
        embed = lambda stimuli: norm(dense(stimuli))  # rows on the scale of the position encoding
        contents = embed(batch.memory)  # [B, M, 2, d]
        keys = contents.mean(axis=-2)
        x = embed(batch.query)[:, None]  # a query sequence of one token
        readable = batch.memory_mask[:, None, :]  # slots of unstored pairs are never read
        for i in range(self.num_layers):
            read = HierarchicalMemoryAttention(self.d_model, self.num_heads, self.k, name=f"memory_attention_{i}")(
                nn.LayerNorm(name=f"memory_norm_{i}")(x), keys, contents, readable
            )
            z = x + read
            hidden = nn.relu(nn.Dense(self.mlp_dim, name=f"mlp_in_{i}")(nn.LayerNorm(name=f"mlp_norm_{i}")(z)))
            x = z + nn.Dense(self.d_model, name=f"mlp_out_{i}")(hidden)
        answer = nn.Dense(self.d_model, name="projection")(nn.LayerNorm(name="output_norm")(x.mean(axis=1)))
        return jnp.einsum("bd,bcd->bc", answer, embed(batch.choices))[None]
