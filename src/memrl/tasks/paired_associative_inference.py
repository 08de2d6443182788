"""Paired Associative Inference, PAI (Banino et al. 2020, "MEMO", Sec. 4.1; used by Lampinen et
al. 2021, App. B.4), on procedurally generated stimuli.

Each trial draws ``num_chains`` chains of ``chain_length`` distinct stimuli, A -> B -> C for the
paper's length 3. The memory holds every adjacent pair of every chain, (A_i, B_i) and (B_i, C_i),
in a random order; the query is A_q and the two choices are its chain's end C_q (the target) and
the end C_f of another chain (the foil), in a random order. No pair links A_q to C_q directly:
the answer needs an inference across two memories. A foil that is itself in memory means
familiarity alone cannot pick the target.

The stimuli stand in for MEMO's ImageNet images: random binary patterns (entries ±1, scaled to
unit norm) of ``stimulus_dim``, from a pool of ``pool_size`` per split, the "test" pool disjoint from the
"train" pool, so that test accuracy measures inference on stimuli never trained on.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from memrl.tasks.base import check_split, register

POOL_SEED = 2020  # the pools are fixed: split i uses PRNGKey(POOL_SEED + i)


class PAIBatch(NamedTuple):
    memory: jax.Array  # [B, num_chains * (chain_length - 1), 2, D] the stored pairs
    query: jax.Array  # [B, D]
    choices: jax.Array  # [B, 2, D]
    label: jax.Array  # [B] int32, index of the target among the choices


@dataclasses.dataclass(frozen=True)
class PairedAssociativeInference:
    num_chains: int = 16
    """chains (triplets, for length 3) per trial"""
    chain_length: int = 3
    """stimuli per chain; the query is its first, the target its last (2 = direct recall)"""
    stimulus_dim: int = 64
    pool_size: int = 1000
    """stimuli per split"""

    num_choices = 2

    def __post_init__(self):
        if self.num_chains < 2:
            raise ValueError(f"num_chains must be >= 2 (the foil comes from another chain), got {self.num_chains}")
        if self.chain_length < 2:
            raise ValueError(f"chain_length must be >= 2, got {self.chain_length}")
        if self.stimulus_dim < 1:
            raise ValueError(f"stimulus_dim must be >= 1, got {self.stimulus_dim}")
        if self.pool_size < self.num_chains * self.chain_length:
            raise ValueError(
                f"pool_size ({self.pool_size}) must hold num_chains * chain_length = "
                f"{self.num_chains * self.chain_length} distinct stimuli"
            )

    @property
    def num_pairs(self) -> int:
        return self.num_chains * (self.chain_length - 1)

    def stimuli(self, split: str) -> jax.Array:
        """[pool_size, stimulus_dim] the fixed ±1 patterns of ``split``, scaled to unit norm."""
        key = jax.random.PRNGKey(POOL_SEED + check_split(split))
        signs = jax.random.rademacher(key, (self.pool_size, self.stimulus_dim), dtype=jnp.float32)
        return signs / jnp.sqrt(self.stimulus_dim)

    def sample(self, key, batch_size: int, split: str = "train") -> PAIBatch:
        pool = self.stimuli(split)
        return jax.vmap(lambda k: self._trial(k, pool))(jax.random.split(key, batch_size))

    def _trial(self, key, pool) -> PAIBatch:
        k_items, k_order, k_query, k_foil, k_label = jax.random.split(key, 5)
        n, length = self.num_chains, self.chain_length
        chains = jax.random.choice(k_items, self.pool_size, (n, length), replace=False)
        pairs = jnp.stack([chains[:, :-1], chains[:, 1:]], axis=-1).reshape(self.num_pairs, 2)
        pairs = jax.random.permutation(k_order, pairs)
        query_chain = jax.random.randint(k_query, (), 0, n)
        foil_chain = (query_chain + jax.random.randint(k_foil, (), 1, n)) % n
        label = jax.random.randint(k_label, (), 0, 2)
        target, foil = chains[query_chain, -1], chains[foil_chain, -1]
        choices = jnp.where(label == 0, jnp.stack([target, foil]), jnp.stack([foil, target]))
        return PAIBatch(pool[pairs], pool[chains[query_chain, 0]], pool[choices], label.astype(jnp.int32))


register("pai", PairedAssociativeInference)
