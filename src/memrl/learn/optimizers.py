"""The optimiser of every learner, built in one place: clip the gradient's global norm, then Adam
(or rectified Adam) or RMSprop (TensorFlow's, ε inside the square root, as the EPN paper's runs used; with
``rmsprop_initial_scale`` 1, TensorFlow 1's, whose average of squared gradients starts at 1).

TF1's ``RMSPropOptimizer`` (momentum 0): ms ← ρ·ms + (1 − ρ)·g², θ ← θ − lr·g / sqrt(ms + ε), ms
starting at 1; optax's starts at 0, so its first updates are about 1 / sqrt(1 − ρ) = 10 times larger
at ρ = 0.99."""

from __future__ import annotations

import optax


def make_optimizer(
    lr: float,
    max_grad_norm: float | None,
    kind: str = "adam",
    adam_eps: float = 1e-8,
    rmsprop_decay: float = 0.99,
    rmsprop_eps: float = 1e-4,
    rmsprop_momentum: float = 0.0,
    rmsprop_initial_scale: float = 0.0,
    warmup_steps: int = 0,
    weight_decay: float = 0.0,
    decay_steps: int = 0,
) -> optax.GradientTransformation:
    """Global-norm clipping at ``max_grad_norm`` (None: none), then ``kind`` ("adam", "radam": rectified
    Adam, Liu et al. 2020, PQN's; or "rmsprop") at ``lr``,
    reached linearly over the first ``warmup_steps`` updates when there are any, and decayed linearly
    to 0 over the next ``decay_steps`` updates when there are any (CleanRL's and PureJaxRL's PPO
    ``anneal_lr``); Adam with ``weight_decay`` above 0 is AdamW (decoupled decay, Loshchilov & Hutter 2019)."""
    if warmup_steps or decay_steps:
        lr = optax.join_schedules(
            [optax.linear_schedule(0.0, lr, warmup_steps), optax.linear_schedule(lr, 0.0, decay_steps)],
            [warmup_steps],
        )
    if weight_decay and kind != "adam":
        raise ValueError(f"weight_decay is AdamW's; the optimizer {kind!r} takes none")
    if kind == "radam":
        step = optax.radam(lr, eps=adam_eps)
    elif kind == "adam":
        step = (
            optax.adamw(lr, eps=adam_eps, weight_decay=weight_decay) if weight_decay else optax.adam(lr, eps=adam_eps)
        )
    elif kind == "rmsprop":
        step = optax.rmsprop(
            lr,
            decay=rmsprop_decay,
            eps=rmsprop_eps,
            initial_scale=rmsprop_initial_scale,
            momentum=rmsprop_momentum or None,
            eps_in_sqrt=True,
        )
    else:
        raise ValueError(f"optimizer must be 'adam', 'radam' or 'rmsprop', got {kind!r}")
    return step if max_grad_norm is None else optax.chain(optax.clip_by_global_norm(max_grad_norm), step)
