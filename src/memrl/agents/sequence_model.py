"""The sequence model every supervised task shares with every core (docs/architecture.md,
its task contract):

    e_t = Embed(x_t)                  token embedding (token ids) or a linear map (vectors), width ``embed_dim``
    y_1..T = core.sequence(e_1..T)    any registered core, from its initial carry, reset at the sequence start
    logits_t = Linear(MLP(y_t))       ``head_widths`` ReLU layers, then one output per class or bit

With ``readout="state"`` the head reads, in place of y_t, the mean of the core's final state vectors
(TLB's bottleneck), as the TLB paper's image classifier does ("we take the mean across the final
temporal latent bottleneck state vectors and pass the resulting representation through an MLP",
Sec. 3.1); every step gets those logits, so it serves tasks scored at their final step only.

With ``unroll_length`` U the core runs the sequence in segments of U steps, each from the carry the
one before left with that carry's gradient stopped: truncated backpropagation through time, as the
papers' agents train in unrolls (HTM: 64-128 steps, Lampinen et al. 2021 App. A; Transformer-XL's
cache likewise). The outputs are the whole sequence's; only the gradient is cut.

Encoder/decoder tasks (Learning to Execute) are one stream through the same core, as sonnet's
example feeds them: the program, then the decoding steps (the task lays them out and scores the
outputs there), so no second core or separate decoder is needed. Cores with named inputs (EPN:
observation, goal, previous action) take no plain sequence and are refused when the model is built.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.agents.actor_critic import MLP
from memrl.cores.base import MemoryCore

SEQUENCE_INPUT_KINDS = ("tokens", "vectors")
READOUTS = ("steps", "state")


def has_state_vectors(core: MemoryCore) -> bool:
    """Whether ``core``'s carry holds state vectors (a "state" entry [B, ..., N, D] with N > 0)."""
    carry = jax.eval_shape(lambda: core.initialize_carry(jax.random.PRNGKey(0), (1,)))
    return isinstance(carry, dict) and "state" in carry and carry["state"].ndim >= 3 and carry["state"].shape[-2] > 0


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
    readout: str = "steps"
    """what the head reads: "steps" (each step's output) or "state" (the mean of the final state vectors)"""
    unroll_length: int = 0
    """steps per segment of truncated backpropagation through time (0: the whole sequence)"""

    def __post_init__(self):
        if getattr(self.core, "named_inputs", False):
            raise ValueError(
                f"core {type(self.core).__name__} takes named inputs (observation, goal, previous action), not a sequence; "
                "the sequence model cannot feed it"
            )
        if self.input_kind not in SEQUENCE_INPUT_KINDS:
            raise ValueError(f"the sequence model reads inputs of kind {SEQUENCE_INPUT_KINDS}, not {self.input_kind!r}")
        if self.readout not in READOUTS:
            raise ValueError(f"the sequence model's readout must be one of {READOUTS}, got {self.readout!r}")
        if self.readout == "state" and not has_state_vectors(self.core):
            raise ValueError(
                f'readout "state" reads the core\'s final state vectors; core {type(self.core).__name__} has none (tlb with num_state > 0 has)'
            )
        if self.unroll_length < 0:
            raise ValueError(f"unroll_length is steps per segment (0: the whole sequence), got {self.unroll_length}")
        if self.unroll_length and self.readout == "state":
            raise ValueError('readout "state" reads the whole sequence\'s final state: give unroll_length 0 with it')
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
        head = lambda y: nn.Dense(self.num_outputs, name="output")(MLP(self.head_widths, name="head")(y))
        if self.readout == "state":
            if resets is not None:
                raise ValueError('readout "state" reads the state at the end of whole sequences; it takes no resets')
            carry, _ = self.core.sequence(x)
            pooled = carry["state"].reshape(x.shape[1], -1, carry["state"].shape[-1]).mean(1)  # over every state vector
            logits = head(pooled)
            return jnp.broadcast_to(logits, (x.shape[0], *logits.shape))  # the head once, not per step
        if resets is None and not self.unroll_length:
            _, ys = self.core.sequence(x)
            return head(ys)
        resets = jnp.zeros(x.shape[:2], bool) if resets is None else resets
        resets = resets.at[0].set(True)
        carry = self.core.initialize_carry(jax.random.PRNGKey(0), x.shape[1:2])
        length = self.unroll_length or x.shape[0]
        outputs = []
        for start in range(0, x.shape[0], length):  # a few segments: the sequence's length over U
            if start:
                carry = jax.lax.stop_gradient(carry)
            carry, ys = self.core.unroll(carry, x[start : start + length], resets[start : start + length])
            outputs.append(ys)
        return head(jnp.concatenate(outputs))
