"""Episodic Planning Network (Ritter et al. 2021, "Rapid task-solving in novel environments", Sec. 4,
App. A.3-A.4).

Input: a dict ``{"observation": [B, Do], "goal": [B, Dg], "prev_action": [B, A]}`` (one-hot previous
action; the agent gives zeros at an episode start). Every step writes one memory row

    m_t = [e(o_t), e_a(a_{t−1}), e(o_{t−1})]

(embeddings; e(o_{−1}) = 0) into a store of ``capacity`` rows with a validity mask, cleared at each
episode start. memrl writes a step's row before the planner runs; the paper writes it after ("the
result is passed as input to the planner. We then add a new memory", Sec. 4), so there the planner
at step t sees rows up to t − 1. The difference: memrl's planner has the newest transition one step
earlier, and an episode's first step plans over one row, not over an empty memory, which the paper
leaves undefined (a max over no rows). The planner appends the goal embedding to every valid row,
projects rows to ``width`` and iterates, with parameters shared over iterations,

    a2a:  B_{i+1} = f(B_i + MHA(LN(B_i)))                          (all rows attend to all rows)
    nxk:  B' = B_i + MHA(LN(B_i), LN(B_0));  B_{i+1} = f(B' + MHA(LN(B')))
          (the k most recent rows form the belief; they attend to the whole memory, then to
          themselves: cost linear in the memory size)

with f(x) = MLP(ReLU(x)) a 2-layer row-wise MLP. The current state embedding is appended to every
row, a shared 2-layer row-wise MLP follows, and a feature-wise max over the valid rows gives the
planner output. The core outputs [planner output, e(o_t), e(g)]; the agent's head (the paper's
2-layer MLP of 64 units) turns it into policy logits and a baseline.

``iterations`` is not part of the parameters, so a trained planner can be run with more or fewer
iterations ("thinking time"). The goal uses the observation embedding when ``share_goal_embedding``
(goals are observations of the goal state in both of the paper's tasks). The memory stores
embeddings as the paper does; rows written before an unroll starts carry no gradient. The planner
runs on the shortest of a few prefixes of the store that holds every written row (``prefixes``):
less work early in an episode, the same outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

from memrl.cores.base import MemoryCore, register, reset_carry
from memrl.settings import check_positive


@custom_vmap
def batch_maximum(n: jax.Array) -> jax.Array:
    """``n`` (an integer scalar); under ``vmap`` the maximum over the mapped axis, unbatched, so that
    a ``lax.switch`` on it stays one branch for all seeds instead of becoming a select of every
    branch. Only for a choice where any value at least as large is as right (a prefix length)."""
    return n


@batch_maximum.def_vmap
def _batch_maximum_vmap(axis_size, in_batched, n):
    return batch_maximum(jnp.max(n, axis=0)), False  # called only with n batched (its one argument)


def attention_mask(query_valid: jax.Array, key_valid: jax.Array) -> jax.Array:
    """[B, 1, Q, K] mask for flax attention from [B, Q] and [B, K] validity."""
    return (query_valid[:, :, None] & key_valid[:, None, :])[:, None]


class PlannerInput(nn.Module):
    """The planner's row projection W [m, e(g)] + b (a kernel [3·embed_dim + embed_dim, width] and
    the bias, as one Dense over memory row and goal has them), computed as W_m m + (W_g e(g) + b):
    a row is projected once when it is written, not again at every later step."""

    embed_dim: int
    width: int

    def setup(self):
        self.kernel = self.param("kernel", nn.initializers.lecun_normal(), (4 * self.embed_dim, self.width))
        self.bias = self.param("bias", nn.initializers.zeros, (self.width,))

    def memory(self, rows):
        """W_m m for memory rows [..., 3·embed_dim]."""
        return rows @ self.kernel[: 3 * self.embed_dim]

    def goal(self, goal):
        """W_g e(g) + b for goal embeddings [..., embed_dim]."""
        return goal @ self.kernel[3 * self.embed_dim :] + self.bias


class PlannerIteration(nn.Module):
    """One planner iteration (parameters shared by all iterations)."""

    width: int
    num_heads: int
    variant: str

    @nn.compact
    def __call__(self, belief, belief_valid, memory, memory_valid):
        mha = lambda name: nn.MultiHeadDotProductAttention(
            self.num_heads, qkv_features=self.width, out_features=self.width, name=name
        )
        if self.variant == "nxk":
            normed_memory = nn.LayerNorm(name="memory_norm")(memory)
            belief = belief + mha("to_memory")(
                nn.LayerNorm(name="belief_norm")(belief), normed_memory, mask=attention_mask(belief_valid, memory_valid)
            )
        normed = nn.LayerNorm(name="self_norm")(belief)
        belief = belief + mha("self_attention")(normed, normed, mask=attention_mask(belief_valid, belief_valid))
        hidden = nn.relu(nn.Dense(self.width, name="f_hidden")(nn.relu(belief)))
        return nn.Dense(self.width, name="f_out")(hidden)


class EPN(MemoryCore):
    """Episodic memory + iterative self-attention planner; see the module docstring."""

    named_inputs: ClassVar[bool] = True

    capacity: int = 100
    """steps the episodic store holds"""
    embed_dim: int = 64
    """width of the embedded observation, goal and action"""
    width: int = 64
    """width of the planner's rows"""
    num_heads: int = 2
    """attention heads of the planner"""
    iterations: int = 2
    """planner iterations (self-attention passes over the store)"""
    variant: Literal["a2a", "nxk"] = "a2a"
    """planner: all-to-all (a2a) or N×k (nxk; fixed by the core's name)"""
    k: int = 50
    """most recent rows that form the N×k planner's belief (they attend to the whole store)"""
    share_goal_embedding: bool = True
    """embed the goal with the observation's embedding"""
    prefixes: int = 5
    """the planner runs on the shortest of the memory's first capacity·i/prefixes rows (i = 1 ..
    prefixes) that holds every row written in the batch: the same outputs, less work early in an
    episode (1: always the whole memory; each prefix is compiled)"""

    def __post_init__(self):
        if self.variant not in ("a2a", "nxk"):
            raise ValueError(f"variant must be 'a2a' or 'nxk', got {self.variant!r}")
        check_positive(self, "capacity", "embed_dim", "width", "num_heads", "iterations", "k", "prefixes")
        if self.width % self.num_heads:
            raise ValueError(f"width ({self.width}) must be divisible by num_heads ({self.num_heads})")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        return {
            "memory": jnp.zeros((*batch_shape, self.capacity, 3 * self.embed_dim)),
            "count": jnp.zeros(batch_shape),  # rows written this episode
            "prev_embedding": jnp.zeros((*batch_shape, self.embed_dim)),
        }

    def setup(self):
        self.embed_observation = nn.Dense(self.embed_dim)
        if not self.share_goal_embedding:
            self.embed_goal = nn.Dense(self.embed_dim)
        self.embed_action = nn.Dense(self.embed_dim)
        self.planner_input = PlannerInput(self.embed_dim, self.width)
        self.iteration = PlannerIteration(self.width, self.num_heads, self.variant)
        self.readout_hidden = nn.Dense(self.width)
        self.readout_out = nn.Dense(self.width)

    def embed(self, observation, goal):
        """(e(o), e(g)) [B, embed_dim] each."""
        if self.share_goal_embedding:
            if goal.shape[-1] != observation.shape[-1]:
                raise ValueError(
                    f"share_goal_embedding needs goals as wide as observations, got {goal.shape[-1]} and {observation.shape[-1]}"
                )
            return self.embed_observation(observation), self.embed_observation(goal)
        return self.embed_observation(observation), self.embed_goal(goal)

    def memory_row(self, state, prev_action, prev_state):
        """[e(o_t), e_a(a_{t-1}), e(o_{t-1})] from the two state embeddings and the one-hot action."""
        return jnp.concatenate([state, self.embed_action(prev_action), prev_state], -1)

    def plan(self, memory, count, state, goal):
        """The planner output [B, width] for a memory [B, capacity, 3·embed_dim] holding ``count``
        [B] rows (the newest at ``(count − 1) % capacity``), after ``iterations`` iterations."""
        return self.plan_readouts(memory, count, state, goal, (self.iterations,))[0]

    def plan_readouts(self, memory, count, state, goal, after: Sequence[int]):
        """The planner outputs [len(after), B, width] read out after each iteration count in
        ``after``, from one pass of max(after) iterations (for probing several thinking times)."""
        if not after or min(after) < 1:
            raise ValueError(f"after must list iteration counts >= 1, got {tuple(after)}")
        plan = lambda core, memory, *args: core.plan_prefix(core.planner_input.memory(memory), *args, after)
        return self.on_prefix(plan, memory, count, state, goal)

    def on_prefix(self, plan, memory, count, state, goal):
        """``plan(self, memory[:, :n], count, state, goal)`` for the shortest n of the ``prefixes``
        prefix lengths that holds every valid row: rows are written in order from an episode's
        start, so the valid ones are a prefix (all n = capacity rows once a memory wraps around)."""
        count = count.astype(jnp.int32)
        lengths = sorted(
            {-(-self.capacity * i // self.prefixes) for i in range(1, self.prefixes + 1)}
        )  # distinct where prefixes > capacity
        if len(lengths) == 1:
            return plan(self, memory, count, state, goal)
        shortest = jnp.searchsorted(jnp.array(lengths), batch_maximum(jnp.max(jnp.minimum(count, self.capacity))))
        # the gradient of a switch keeps the residuals of every branch (zeros for those not taken):
        # each branch keeps only its inputs and recomputes its forward pass in the backward
        branches = [
            nn.checkpoint(
                lambda core, memory, *args, n=n: plan(core, memory[:, :n], *args),
                policy=jax.checkpoint_policies.nothing_saveable,
            )
            for n in lengths
        ]
        if self.is_initializing():  # every branch creates the same parameters
            return branches[-1](self, memory, count, state, goal)
        # only the parameters enter the branches: what one sows (captured intermediates) has the prefix's shape
        return nn.switch(shortest, branches, self, memory, count, state, goal, variables="params")

    def plan_prefix(self, projected, count, state, goal, after: Sequence[int]):
        """The planner on n projected rows W_m m [B, n, width] of memories that hold ``count`` rows
        each (all n valid where count > n: only when n is the capacity)."""
        rows = projected + self.planner_input.goal(goal)[:, None]
        length = rows.shape[1]
        valid = jnp.arange(length)[None] < count[:, None]
        if self.variant == "a2a":
            belief, belief_valid = rows, valid
        else:  # the k most recent rows, newest first
            recent = (count[:, None] - 1 - jnp.arange(min(self.k, length))[None]) % length
            belief = jnp.take_along_axis(rows, recent[..., None], axis=1)
            belief_valid = jnp.arange(min(self.k, length))[None] < count[:, None]
        readouts = {}
        for i in range(1, max(after) + 1):
            belief = self.iteration(belief, belief_valid, rows, valid)
            if i in after:
                readouts[i] = self.readout(belief, belief_valid, state)
        return jnp.stack([readouts[i] for i in after])

    def readout(self, belief, belief_valid, state):
        """Append the state embedding to every row, a row-wise 2-layer MLP, max over valid rows."""
        with_state = jnp.concatenate(
            [belief, jnp.broadcast_to(state[:, None], (*belief.shape[:2], self.embed_dim))], -1
        )
        readout = self.readout_out(nn.relu(self.readout_hidden(with_state)))
        return jnp.max(jnp.where(belief_valid[..., None], readout, -jnp.inf), axis=1)

    @staticmethod
    def check_inputs(x):
        if not isinstance(x, dict) or set(x) != {"observation", "goal", "prev_action"}:
            raise ValueError("the epn core takes a dict with keys 'observation', 'goal' and 'prev_action'")

    def write(self, carry, x):
        """Write step ``x``'s row: (carry, e(o), e(g), the row [B, 3·embed_dim], its slot [B, capacity, 1])."""
        self.check_inputs(x)
        state, goal = self.embed(x["observation"], x["goal"])
        row = self.memory_row(state, x["prev_action"], carry["prev_embedding"])
        count = carry["count"].astype(jnp.int32)
        slot = jax.nn.one_hot(count % self.capacity, self.capacity, dtype=bool)[..., None]
        carry = {
            "memory": jnp.where(slot, row[:, None], carry["memory"]),
            "count": (count + 1).astype(jnp.float32),
            "prev_embedding": state,
        }
        return carry, state, goal, row, slot

    def step(self, carry, x, reset):
        carry, state, goal, _, _ = self.write(carry, x)
        return carry, jnp.concatenate([self.plan(carry["memory"], carry["count"], state, goal), state, goal], -1)

    def unroll(self, carry, xs, resets):
        """The steps in a scan whose carry also holds the memory's projected rows W_m m (the
        planner's share of a row, the same at every later step): each row is projected once, when it
        is written, instead of at every step, and the scan's gradient passes the projected rows
        (width) instead of the rows (3·embed_dim). Equal to T steps (tests)."""

        def body(core, carried, inputs):
            x, reset = inputs
            initial = (core.initialize_carry(None, reset.shape), jnp.zeros_like(carried[1]))
            carry, projected = reset_carry(carried, initial, reset)
            carry, state, goal, row, slot = core.write(carry, x)
            projected = jnp.where(slot, core.planner_input.memory(row)[:, None], projected)
            plan = lambda core, rows, *args: core.plan_prefix(rows, *args, (core.iterations,))[0]
            return (carry, projected), jnp.concatenate(
                [core.on_prefix(plan, projected, carry["count"], state, goal), state, goal], -1
            )

        scan = nn.scan(
            body,
            variable_broadcast="params",
            variable_axes={"intermediates": 0},
            split_rngs={"params": False},
            in_axes=0,
            out_axes=0,
        )
        (carry, _), ys = scan(self, (carry, self.planner_input.memory(carry["memory"])), (xs, resets))
        return carry, ys


register("epn", EPN)
register("epn-nxk", EPN, fixed=dict(variant="nxk"))
