"""Does an action that is never the answer hold a clone's cross-entropy at the chance level? A
two-step probe of the plateau that stopped the Passive Visual Match clones (docs/results/htm.md,
"Why nothing learnt the choice"), small enough to run in a minute a variant.

Each sequence is two 7×7 frames of one-hot cells (channels: wall, agent at the centre, three
colours): first a square of one colour on a random cell, then three squares, one of each colour,
on the agent's neighbours; the target is the move (N, E, S, W) onto the square of the first
frame's colour. An LSTM of 128 reads the two frames, a ReLU layer of 512 and a linear layer give
the four logits (orthogonal, gain 0.01, as memrl's policy layer), trained by cross-entropy with
Adam 1e-3 on fresh batches of 64.

    python benchmarks/never_right_output.py UPDATES SEEDS [VARIANT ...]

Prints per variant (all, or those named: see ``VARIANTS``) and seed the cross-entropy of the last 50 updates (ln 3 = 1.10: the chance
level) and the accuracy on 2,000 fresh sequences: the squares always on N, E and W (South never
the answer), the squares on three of the four neighbours drawn per sequence (every move the answer
sometimes), the three-move output (South removed), and the first with other optimiser settings
and the policy layer's gain 1.
"""

import sys
import time

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

SIZE, CHANNELS, COLOURS = 7, 5, 3
MOVES = jnp.array([(-1, 0), (0, 1), (1, 0), (0, -1)])  # N, E, S, W
NEVER_SOUTH = jnp.array([0, 1, 3])
VARIANTS = {
    "South never the answer": {},
    "squares on 3 of 4 cells": {"drawn_cells": True},
    "South removed (3 outputs)": {"outputs": 3},
    "policy layer gain 1": {"gain": 1.0},
    "Adam eps 1e-3": {"eps": 1e-3},
    "Adam lr 3e-4": {"lr": 3e-4},
    "SGD 0.05, momentum 0.9": {"sgd": True, "lr": 0.05},
}


def sequences(key, count: int, drawn_cells: bool):
    """(frames [count, 2, 7·7·5], target move [count])."""
    colour_key, cell_key, layout_key = jax.random.split(key, 3)
    cue = jax.random.randint(colour_key, (count,), 0, COLOURS)
    cue_cell = jax.random.randint(cell_key, (count, 2), 1, SIZE - 1)
    rows = jnp.arange(count)
    walls = jnp.zeros((SIZE, SIZE)).at[0].set(1).at[-1].set(1).at[:, 0].set(1).at[:, -1].set(1)
    centre = SIZE // 2
    room = jnp.zeros((count, SIZE, SIZE, CHANNELS)).at[..., 0].set(walls).at[:, centre, centre, 1].set(1)
    first = room.at[rows, cue_cell[:, 0], cue_cell[:, 1], 2 + cue].set(1)
    keys = jax.random.split(layout_key, count)
    if drawn_cells:
        cells = jax.vmap(lambda k: jax.random.permutation(k, 4)[:COLOURS])(keys)
    else:
        cells = jax.vmap(lambda k: NEVER_SOUTH[jax.random.permutation(k, COLOURS)])(keys)
    second = room
    for colour in range(COLOURS):
        at = centre + MOVES[cells[:, colour]]
        second = second.at[rows, at[:, 0], at[:, 1], 2 + colour].set(1)
    return jnp.stack([first, second], 1).reshape(count, 2, -1), cells[rows, cue]


class Probe(nn.Module):
    """An LSTM of 128 over the frames, then ReLU 512 and the logits."""

    outputs: int
    gain: float

    @nn.compact
    def __call__(self, frames):
        cell = nn.OptimizedLSTMCell(128)
        carry = cell.initialize_carry(jax.random.PRNGKey(0), frames[:, 0].shape)
        for t in range(frames.shape[1]):
            carry, hidden = cell(carry, frames[:, t])
        hidden = nn.relu(nn.Dense(512)(hidden))
        return nn.Dense(self.outputs, kernel_init=nn.initializers.orthogonal(self.gain))(hidden)


def train(updates: int, seed: int, drawn_cells=False, outputs=4, gain=0.01, eps=1e-8, lr=1e-3, sgd=False):
    """(mean cross-entropy of the last 50 updates, held-out accuracy) of one variant."""
    probe = Probe(outputs, gain)
    relabel = (lambda move: jnp.where(move == 3, 2, move)) if outputs == 3 else (lambda move: move)
    params = probe.init(jax.random.PRNGKey(seed), sequences(jax.random.PRNGKey(99), 8, drawn_cells)[0])
    optimiser = optax.sgd(lr, momentum=0.9) if sgd else optax.adam(lr, eps=eps)
    state = optimiser.init(params)

    @jax.jit
    def update(params, state, key):
        frames, target = sequences(key, 64, drawn_cells)
        loss_of = lambda p: optax.softmax_cross_entropy_with_integer_labels(probe.apply(p, frames), relabel(target))
        loss, grads = jax.value_and_grad(lambda p: loss_of(p).mean())(params)
        changes, state = optimiser.update(grads, state, params)
        return optax.apply_updates(params, changes), state, loss

    losses = []
    for step in range(updates):
        params, state, loss = update(params, state, jax.random.fold_in(jax.random.PRNGKey(seed + 1000), step))
        losses.append(float(loss))
    frames, target = sequences(jax.random.PRNGKey(7), 2000, drawn_cells)
    accuracy = float((probe.apply(params, frames).argmax(-1) == relabel(target)).mean())
    return float(np.mean(losses[-50:])), accuracy


def main(updates: int, seeds: int, names=tuple(VARIANTS)) -> None:
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        raise SystemExit(f"no variant {', '.join(map(repr, unknown))}; the variants: {', '.join(map(repr, VARIANTS))}")
    print(f"{updates} updates of 64 sequences; cross-entropy of the last 50 (chance ln 3 = 1.10), held-out accuracy")
    for name in names:
        for seed in range(seeds):
            started = time.time()
            loss, accuracy = train(updates, seed, **VARIANTS[name])
            print(f"{name}, seed {seed}: {loss:.3f}, {accuracy:.2f} ({time.time() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), tuple(sys.argv[3:]) or tuple(VARIANTS))
