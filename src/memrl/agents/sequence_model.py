"""The sequence model every supervised task shares with every core (DESIGN.md, "Supervised
sequence tasks"):

    e_t = Embed(x_t)                  token embedding (token ids) or a linear map (vectors), width ``embed_dim``
    y_1..T = core.sequence(e_1..T)    any registered core, from its initial carry, reset at the sequence start
    logits_t = Linear(MLP(y_t))       ``head_widths`` ReLU layers, then one output per class or bit

Encoder/decoder tasks (Learning to Execute) are one stream through the same core, as sonnet's
example feeds them: the program, then the decoding steps (the task lays them out and scores the
outputs there), so no second core or separate decoder is needed. Cores with named inputs (EPN:
observation, goal, previous action) take no plain sequence and are refused when the model is built.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import flax.linen as nn

from memrl.agents.actor_critic import MLP
from memrl.cores.base import MemoryCore

SEQUENCE_INPUT_KINDS = ("tokens", "vectors")


class SequenceModel(nn.Module):
    """Embedding -> ``core.sequence`` (or ``unroll`` with resets) -> per-step head (module docstring)."""

    core: MemoryCore
    input_kind: str
    """"tokens" or "vectors" (the task's)"""
    input_size: int
    """vocabulary size or vector width"""
    num_outputs: int
    """classes or bits per step"""
    embed_dim: int = 64
    head_widths: tuple[int, ...] = ()

    def __post_init__(self):
        if getattr(self.core, "named_inputs", False):
            raise ValueError(
                f"core {type(self.core).__name__} takes named inputs (observation, goal, previous action), not a sequence; "
                "the sequence model cannot feed it"
            )
        if self.input_kind not in SEQUENCE_INPUT_KINDS:
            raise ValueError(f"the sequence model reads inputs of kind {SEQUENCE_INPUT_KINDS}, not {self.input_kind!r}")
        super().__post_init__()

    @nn.compact
    def __call__(self, inputs: jax.Array, resets: jax.Array | None = None) -> jax.Array:
        """inputs [T, B] ids or [T, B, input_size] vectors -> logits [T, B, num_outputs]. The core
        starts from its initial carry at the first step and wherever ``resets`` [T, B] is true
        (default: only at the first step)."""
        if self.input_kind == "tokens":
            x = nn.Embed(self.input_size, self.embed_dim, name="embedding")(inputs)
        else:
            x = nn.Dense(self.embed_dim, name="embedding")(inputs)
        if resets is None:
            _, ys = self.core.sequence(x)
        else:
            carry = self.core.initialize_carry(jax.random.PRNGKey(0), x.shape[1:2])
            _, ys = self.core.unroll(carry, x, resets.at[0].set(True))
        return nn.Dense(self.num_outputs, name="output")(MLP(self.head_widths, name="head")(ys))
