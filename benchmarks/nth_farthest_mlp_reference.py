"""Is Nth Farthest learnable at a given size without memory? A 4 x 256 ReLU MLP on the whole sequence,
flattened (its rows in the generator's random order), trained with Adam on fresh batches: a reference for
how many sequences the relation takes when nothing has to be stored (docs/results.md, Nth Farthest pilots).

    python benchmarks/nth_farthest_mlp_reference.py OBJECTS DIMENSIONS BATCH UPDATES LR

Prints, ten times, the accuracy on 4,096 held-out sequences, overall and on the ranks n >= 1 (whose
answer needs the distances; a model that answers m when n = 0 and guesses otherwise scores 1/(N-1) there).
"""

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

from memrl.tasks.nth_farthest import NthFarthest

WIDTHS = (256, 256, 256, 256)


def flattened(batch, num_objects: int, num_features: int):
    """(inputs [B, N·width], labels [B], rank n [B]) of a time-major batch."""
    inputs = jnp.swapaxes(batch.inputs, 0, 1)
    rank = jnp.argmax(batch.inputs[0, :, num_features + 2 * num_objects :], -1)
    return inputs.reshape(inputs.shape[0], -1), batch.targets[-1], rank


def init_mlp(key, width_in: int, num_outputs: int):
    params = []
    for width in (*WIDTHS, num_outputs):
        key, k = jax.random.split(key)
        params.append((jax.random.normal(k, (width_in, width)) * np.sqrt(2 / width_in), jnp.zeros(width)))
        width_in = width
    return params


def mlp(params, x):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        x = jax.nn.relu(x) if i < len(params) - 1 else x
    return x


def main(num_objects: int, num_features: int, batch_size: int, updates: int, lr: float) -> None:
    task = NthFarthest(batch_size=batch_size, num_objects=num_objects, num_features=num_features)
    test = NthFarthest(batch_size=4096, num_objects=num_objects, num_features=num_features).sample(
        jax.random.PRNGKey(99), "test"
    )
    test_x, test_y, test_rank = flattened(test, num_objects, num_features)
    optimizer = optax.adam(lr)

    def loss(params, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(mlp(params, x), y).mean()

    @jax.jit
    def update(params, opt_state, key):
        x, y, _ = flattened(task.sample(key), num_objects, num_features)
        grads = jax.grad(loss)(params, x, y)
        changes, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, changes), opt_state

    params = init_mlp(jax.random.PRNGKey(0), test_x.shape[-1], num_objects)
    opt_state = optimizer.init(params)
    start = time.time()
    for i in range(1, updates + 1):
        params, opt_state = update(params, opt_state, jax.random.PRNGKey(i))
        if i % max(1, updates // 10) == 0:
            correct = np.asarray(jnp.argmax(mlp(params, test_x), -1) == test_y)
            ranked = np.asarray(test_rank) >= 1
            print(
                f"update {i}: accuracy {correct.mean():.3f}, ranks n >= 1 {correct[ranked].mean():.3f} "
                f"(shortcut there {1 / (num_objects - 1):.3f}), {time.time() - start:.0f} s",
                flush=True,
            )


if __name__ == "__main__":
    objects, dimensions, batch, steps, rate = sys.argv[1:6]
    main(int(objects), int(dimensions), int(batch), int(steps), float(rate))
