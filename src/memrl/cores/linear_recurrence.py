"""Linear recurrences computed in parallel over time, with episode resets inside the scan.

A core whose state follows

    h_t = a_t ⊙ h_{t-1} + b_t            (a_t, b_t from the step's input only)

runs its ``unroll`` either as one ``jax.lax.associative_scan`` over time (depth log T instead of T)
with the operator on pairs

    (a, b) ∘ (a', b') = (a' a, a' b + b')      (the step (a, b), then the step (a', b'))

which is associative, or as a plain ``jax.lax.scan`` of T steps. A reset at step t replaces h_{t-1}
by the initial state, zero for every core here, which is the same as a_t = 0: the resets fold into
the elements before the scan, and the associative scan from a carry h_0 gives h_t = A_t h_0 + B_t,
where (A_t, B_t) is its t-th prefix.

Which is faster depends on the device: the associative scan does about twice the arithmetic of the
sequential one in exchange for depth, which an accelerator's parallel units turn into speed and a
CPU's few cores do not (``memrl bench unroll`` measures both). ``scan="auto"`` picks the
sequential scan on a CPU and the associative one elsewhere; both give the same states.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.cores.base import MemoryCore, broadcast_right

SCANS = ("auto", "sequential", "associative")


def chosen_scan(scan: str) -> str:
    """``scan`` ("sequential" or "associative"), or for "auto" the one that suits JAX's default
    backend: sequential on a CPU, associative on an accelerator."""
    if scan not in SCANS:
        raise ValueError(f"scan must be one of {SCANS}, got {scan!r}")
    if scan != "auto":
        return scan
    return "sequential" if jax.default_backend() == "cpu" else "associative"


def scan_linear(a: jax.Array, b, h0, resets: jax.Array, scan: str = "auto"):
    """Every h_t (t = 1..T) of h_t = a_t ⊙ h_{t-1} + b_t from h_0, where a reset at t starts from 0,
    by the ``scan`` that ``chosen_scan`` gives.

    ``b`` and ``h0`` are pytrees of the same structure (leaves [T, B, ...] and [B, ...]); ``a``
    [T, B, ...] broadcasts against each leaf of ``b`` from the left (trailing axes it lacks are 1);
    ``resets`` bool [T, B]. Returns the states, a pytree like ``b``."""
    a = jnp.where(broadcast_right(resets, a), jnp.zeros((), a.dtype), a)
    if chosen_scan(scan) == "sequential":

        def step(h, elements):
            a_t, b_t = elements
            h = jax.tree.map(lambda h, b: broadcast_right(a_t, h) * h + b, h, b_t)
            return h, h

        return jax.lax.scan(step, h0, (a, b))[1]

    def combine(first, then):
        a1, b1 = first
        a2, b2 = then
        return a2 * a1, jax.tree.map(lambda x1, x2: broadcast_right(a2, x1) * x1 + x2, b1, b2)

    prefix_a, prefix_b = jax.lax.associative_scan(combine, (a, b), axis=0)
    return jax.tree.map(lambda h, x: broadcast_right(prefix_a, x) * h[None] + x, h0, prefix_b)


class LinearRecurrentCore(MemoryCore):
    """A core whose state is a linear recurrence (module docstring). Subclasses give

        a, b, context = self.elements(x)     # x [..., D] with any leading axes
        y = self.readout(h, context)         # h the state after the step

    and ``zero_state(batch_shape)``; ``carry_of`` / ``state_of`` convert where the carry stores the
    state in another form (a complex state as its real and imaginary parts). ``step`` applies the
    recurrence once; ``unroll`` scans all T steps at once."""

    scan: str = "auto"
    """how ``unroll`` runs the recurrence over time: "sequential" (T steps of ``lax.scan``),
    "associative" (``lax.associative_scan``, depth log T, about twice the arithmetic) or "auto":
    sequential on a CPU, associative on an accelerator"""

    def __post_init__(self):
        chosen_scan(self.scan)  # refuses a scan it does not know
        super().__post_init__()

    def zero_state(self, batch_shape):
        raise NotImplementedError

    def elements(self, x):
        raise NotImplementedError

    def readout(self, h, context):
        raise NotImplementedError

    def carry_of(self, h):
        return h

    def state_of(self, carry):
        return carry

    def initialize_carry(self, rng, batch_shape):
        return self.carry_of(self.zero_state(tuple(batch_shape)))

    def step(self, carry, x, reset):
        a, b, context = self.elements(x)
        h = jax.tree.map(lambda h, b: broadcast_right(a, h) * h + b, self.state_of(carry), b)
        return self.carry_of(h), self.readout(h, context)

    def unroll(self, carry, xs, resets):
        a, b, context = self.elements(xs)
        hs = scan_linear(a, b, self.state_of(carry), resets, self.scan)
        return self.carry_of(jax.tree.map(lambda h: h[-1], hs)), self.readout(hs, context)


class ComplexStateCore(LinearRecurrentCore):
    """A linear-recurrent core whose state is ``state`` complex units (the LRU, S5): zero at the
    start, held in the carry as its real and imaginary parts."""

    def zero_state(self, batch_shape):
        return jnp.zeros((*batch_shape, self.state), jnp.complex64)

    def carry_of(self, h):
        return {"re": h.real, "im": h.imag}

    def state_of(self, carry):
        return jax.lax.complex(carry["re"], carry["im"])
