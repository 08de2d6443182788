"""Properties every registered core must have (docs/architecture.md, the memory-core contract)."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from conftest import LEARNING_SEEDS, optimised
from conftest import SMALL_CORES as SMALL

from memrl import cores
from memrl.learn.optimizers import make_optimizer
from memrl.learn.ppo_config import PPOConfig

D = 6  # input width used throughout
NAMED_INPUTS = {"epn", "epn-nxk"}  # cores that take {"observation", "goal", "prev_action"}


def core_input(name, xs):
    """The test's [..., D] inputs in the form the core takes."""
    if name in NAMED_INPUTS:
        return {"observation": xs[..., 0:3], "goal": xs[..., 3:6], "prev_action": xs[..., 3:5]}
    return xs


def test_every_registered_core_is_covered():
    assert sorted(SMALL) == cores.names()


# One group per core: under xdist a core's tests run in one worker, which compiles its step and unroll once.
@pytest.fixture(
    scope="module", params=[pytest.param(name, marks=pytest.mark.xdist_group(f"core-{name}")) for name in sorted(SMALL)]
)
def setup(request):
    name = request.param
    core = cores.make(name, **SMALL[name])
    key = jax.random.PRNGKey(0)
    carry = core.initialize_carry(key, (3,))
    params = jax.jit(core.init)(key, carry, core_input(name, jnp.zeros((3, D))), jnp.ones((3,), bool))
    step = jax.jit(lambda p, c, x, r: core.apply(p, c, core_input(name, x), r))
    unroll = jax.jit(lambda p, c, xs, rs: core.apply(p, c, core_input(name, xs), rs, method=core.unroll))
    return name, core, params, step, unroll


T, B = 10, 3  # every test unrolls [T, B] inputs, so each core compiles its unroll for one shape


def _garbage_like(carry, key):
    """A carry full of nonsense, so a test shows that resets replace it."""
    leaves, tree = jax.tree.flatten(carry)
    keys = jax.random.split(key, len(leaves))

    def garbage(key, leaf):
        if leaf.dtype == bool:
            return jax.random.bernoulli(key, 0.5, leaf.shape)
        if jnp.issubdtype(leaf.dtype, jnp.integer):
            return jax.random.randint(key, leaf.shape, 0, 3, leaf.dtype)
        return 3.0 * jax.random.normal(key, leaf.shape)

    return jax.tree.unflatten(tree, [garbage(k, leaf) for k, leaf in zip(keys, leaves)])


def test_bad_inputs_are_refused_at_the_cores_boundary_by_what_was_expected(setup):
    """Every core (issue 86 §1): a wrong batch shape, resets of another length, integer inputs and a
    carry of another batch size or core are refused with a message that names what was expected."""
    name, core, params, step, unroll = setup
    with pytest.raises(
        ValueError, match="batch_shape must be a tuple of positive integers, such as \\(16,\\); got \\(-2,\\)"
    ):
        core.initialize_carry(jax.random.PRNGKey(0), (-2,))
    carry = core.initialize_carry(jax.random.PRNGKey(0), (B,))
    xs, resets = jnp.zeros((T, B, D)), jnp.zeros((T, B), bool)
    with pytest.raises(ValueError, match="an unroll: resets must have shape \\[T, B\\], got shape \\(3,\\)"):
        unroll(params, carry, xs, resets[0])
    with pytest.raises(ValueError, match="the carry does not fit 3 sequences of this core"):
        unroll(params, core.initialize_carry(jax.random.PRNGKey(0), (B + 1,)), xs, resets)
    with pytest.raises(ValueError, match="a step: the carry does not fit 3 sequences"):
        step(params, {"not": jnp.zeros(1)}, xs[0], resets[0])
    if name not in NAMED_INPUTS:
        with pytest.raises(ValueError, match="inputs must be floating point, got int32 \\(embed token ids first"):
            core.apply(params, carry, jnp.zeros((T, B, D), jnp.int32), resets, method=core.unroll)
        with pytest.raises(
            ValueError, match="a step: inputs must be \\[B, ...\\] as the resets \\(3,\\); got shape \\(4, 6\\)"
        ):
            core.apply(params, carry, jnp.zeros((B + 1, D)), resets[0])


def test_reset_invariance(setup):
    """One long batch with resets in the middle equals each episode run alone from a fresh carry
    (episodes alone are rows of [T, B] batches too: outputs never depend on later inputs)."""
    name, core, params, step, unroll = setup
    xs = jax.random.normal(jax.random.PRNGKey(1), (T, B, D))
    starts = {0: [0, 4], 1: [0, 7, 8], 2: [0]}
    resets = np.zeros((T, B), bool)
    for b, ts in starts.items():
        resets[ts, b] = True
    carry = _garbage_like(core.initialize_carry(jax.random.PRNGKey(0), (B,)), jax.random.PRNGKey(2))
    _, ys = unroll(params, carry, xs, jnp.asarray(resets))
    episodes = [(b, start, end) for b, ts in starts.items() for start, end in zip(ts, ts[1:] + [T])]
    for first in range(0, len(episodes), B):
        group = episodes[first : first + B]
        alone_xs = np.array(jax.random.normal(jax.random.PRNGKey(7), (T, B, D)))  # filler after each episode
        for row, (b, start, end) in enumerate(group):
            alone_xs[: end - start, row] = xs[start:end, b]
        _, alone = unroll(
            params, core.initialize_carry(jax.random.PRNGKey(0), (B,)), jnp.asarray(alone_xs), jnp.zeros((T, B), bool)
        )
        for row, (b, start, end) in enumerate(group):
            np.testing.assert_allclose(
                ys[start:end, b], alone[: end - start, row], atol=1e-5, err_msg=f"{name} row {b} episode at {start}"
            )


def test_step_equals_unroll(setup):
    name, core, params, step, unroll = setup
    xs = jax.random.normal(jax.random.PRNGKey(3), (T, B, D))
    resets = jax.random.bernoulli(jax.random.PRNGKey(4), 0.2, (T, B)).at[0].set(True)
    carry = core.initialize_carry(jax.random.PRNGKey(0), (B,))
    final_unrolled, ys = unroll(params, carry, xs, resets)
    outs = []
    for t in range(T):
        carry, y = step(params, carry, xs[t], resets[t])
        outs.append(y)
    np.testing.assert_allclose(np.stack(outs), ys, atol=1e-5)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-5), carry, final_unrolled)


def test_unroll_continues_from_its_carry(setup):
    """Two unrolls in a row equal one over both segments: the second starts from a non-empty carry
    (a transformer's cache of the first segment) and an episode runs across the split."""
    name, core, params, step, unroll = setup
    split = T // 2  # both halves have one shape: one more compile
    xs = jax.random.normal(jax.random.PRNGKey(5), (T, B, D))
    resets = np.zeros((T, B), bool)
    resets[0] = True
    resets[3, 1] = resets[8, 2] = True  # an episode restarts before the split in row 1, after it in row 2
    carry = core.initialize_carry(jax.random.PRNGKey(0), (B,))
    whole_carry, whole = unroll(params, carry, xs, jnp.asarray(resets))
    middle, first = unroll(params, carry, xs[:split], jnp.asarray(resets[:split]))
    last_carry, second = unroll(params, middle, xs[split:], jnp.asarray(resets[split:]))
    np.testing.assert_allclose(np.concatenate([first, second]), whole, atol=1e-5)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-5), last_carry, whole_carry)


def test_sequence_form_equals_unroll_from_the_initial_carry(setup):
    """``core.sequence`` (TLB: whole chunks at once) equals the step-by-step unroll of fresh sequences."""
    name, core, params, step, unroll = setup
    if name in NAMED_INPUTS:
        pytest.skip("named inputs: no plain sequence")
    xs = jax.random.normal(jax.random.PRNGKey(6), (T, B, D))
    carry = core.initialize_carry(jax.random.PRNGKey(0), (B,))
    unrolled_carry, unrolled = unroll(params, carry, xs, jnp.zeros((T, B), bool).at[0].set(True))
    sequence_carry, ys = jax.jit(lambda p, xs: core.apply(p, xs, method=core.sequence))(params, xs)
    np.testing.assert_allclose(ys, unrolled, atol=1e-5)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-5), sequence_carry, unrolled_carry)


def test_carry_shapes_and_dtypes_are_stable_under_jit(setup):
    name, core, params, step, unroll = setup
    carry = core.initialize_carry(jax.random.PRNGKey(0), (B,))
    before = jax.tree.map(lambda a: (a.shape, a.dtype), carry)
    for t in range(6):  # past the transformers' memory length
        carry, y = step(params, carry, jnp.ones((B, D)) * t, jnp.zeros((B,), bool))
    assert jax.tree.map(lambda a: (a.shape, a.dtype), carry) == before
    assert y.shape[0] == B and y.ndim == 2


def test_gradients_are_finite_and_nonzero(setup):
    name, core, params, step, unroll = setup
    xs = jax.random.normal(jax.random.PRNGKey(5), (T, B, D))
    resets = jnp.zeros((T, B), bool).at[0].set(True).at[3, 1].set(True)
    carry = core.initialize_carry(jax.random.PRNGKey(0), (B,))

    def loss(p, xs):
        return jnp.sum(unroll(p, carry, xs, resets)[1] ** 2)

    grads_p, grads_x = jax.grad(loss, argnums=(0, 1))(params, xs)
    for g in jax.tree.leaves(grads_p) + [grads_x]:
        assert np.all(np.isfinite(g))
    assert float(jnp.abs(grads_x[0]).sum()) > 0  # the first input reaches the outputs
    if jax.tree.leaves(params):
        assert any(float(jnp.abs(g).sum()) > 0 for g in jax.tree.leaves(grads_p))


# ----- learning: remember a bit for 21 steps ---------------------------------------------------
DELAY = 21
LEARN = {name: dict(kw) for name, kw in SMALL.items()}
LEARN["trxl"].update(memory_length=24)
LEARN["gtrxl"].update(memory_length=24)
LEARN["trxl-topk"].update(memory_length=24)
LEARN["htm"].update(window=4, chunk_size=4, num_chunks=6)  # the bit is only in the chunk store
LEARN["transformer"].update(chunk_size=24)  # the whole sequence in one block
# At the paper's initialisation the minGRU's update gate starts at 0.5, so the bit's trace halves every
# step (2^-21 at the query) and its gradient with it: 0.50 after 200, 600 and 1,500 steps (hidden 8 and
# 32). With the gate's bias at -3 the trace starts at 0.95^21 = 0.34: 1.0 from 300 steps (2026-11-29).
LEARN["min-gru"].update(gate_bias=-3.0)
ACCURACY_THRESHOLD = 0.9
BIT_STEPS = 200
"""Adam steps of the check: every core was at >= 0.988 after 150 steps except conv-lstm (0.49 at
100, 1.0 at 150; `bit_accuracies` evaluated every 50 steps, 2026-11-26) and the minGRU (``BIT_STEPS_OF``)"""
BIT_STEPS_OF = {"min-gru": 400, "gated-delta-net": 400, "lru": 400, "gru": 600, "set": 600}
"""cores that need more steps: the minGRU with its gate's bias at -3 is at 0.5 after 200, 1.0 after 300;
on 3 initialisations (2026-12-07; 200 steps had been measured on one) the gated DeltaNet's and the LRU's
slowest seeds were at 0.90-0.93 and 0.51 after 200 steps and 1.0 after 400 (8 seeds), the GRU's at 0.50
after 200 and 400 and 1.0 after 600 under Adam (9 seeds), SET's at 0.54-0.88 after 200 and 0.90-1.0
after 600 (8 seeds)"""
SEED_SENSITIVE = {
    "feedback-transformer": "2-3 initialisations of 8 (seed 1 of 3 here) stay at chance to 600 steps under every "
    "optimiser of the check: in its first 100 updates the output's sensitivity to the bit falls 5,000-fold (|dy/dx0| "
    "0.024 -> 5e-6) and keeps falling (2026-12-07)",
    "rmc": "one initialisation of 8 (seed 0 of 3 here) stays at chance to 600 steps under every optimiser of the "
    "check: its first updates (initial loss 1.36, gradient norm 13) cut the output's sensitivity to the bit 60-fold "
    "within 100 steps (|dy/dx0| 0.049 -> 0.0008), and it never recovers (2026-12-07)",
}
"""cores of which some initialisation does not learn the bit in the check's steps: the check asserts
that 2 of 3 do and that one still does not (take the core out when it learns on every seed)"""
BIT_LR = 3e-3
OPTIMISERS = {
    "adam": (jnp.inf, 1e-8),
    "ppo defaults": (PPOConfig().max_grad_norm, PPOConfig().adam_eps),
}
"""the check's optimisers, (clip of the global gradient norm, Adam's ε) for ``make_optimizer`` at the
check's learning rate: Adam at ε 1e-8 unclipped (the supervised learner's, and IMPALA's Adam), and PPO's
default clipping and ε (0.5, 1e-5): a core whose parameters' gradients sit far below a learner's ε
learns nothing under it"""
BELOW_PPO_EPS = {
    "s6": "its scan parameters' gradients start near 1e-10 (memrl analyze gradient-scale): under PPO train it "
    "with --adam-eps 1e-8 (at PPO's 1e-5 4 of 9 initialisations learn in 200 steps, at 1e-8 8 of 9; 2026-12-07)",
    "gru": "at PPO's ε 2 of 8 initialisations (seed 1 of 3 here) are at chance after 600 steps, with or without "
    "PPO's clipping, and every one learns by 1,500; at ε 1e-8 every one by 600, clipped or not: the ε delays the "
    "GRU (hidden 16), it does not freeze it (2026-12-07)",
}
"""cores that do not learn the bit at PPO's default ε on every initialisation, and why; the check asserts
that they learn on every one at Adam's 1e-8 and still not on every one at PPO's ε"""


class BitReader(nn.Module):
    core: cores.MemoryCore
    name_: str

    @nn.compact
    def __call__(self, xs):
        carry = self.core.initialize_carry(jax.random.PRNGKey(0), xs.shape[1:2])
        resets = jnp.zeros(xs.shape[:2], bool).at[0].set(True)
        _, ys = self.core.unroll(carry, core_input(self.name_, xs), resets)
        return nn.Dense(1)(ys[-1])[:, 0]


def memory_batch(key, batch=32):
    """Bit b = ±1 shown at t = 0 only, ±1 noise on another channel at every step, a query flag at
    the last step: the label is b, DELAY steps after it was seen."""
    bit_key, noise_key = jax.random.split(key)
    bits = jnp.where(jax.random.bernoulli(bit_key, 0.5, (batch,)), 1.0, -1.0)
    xs = jnp.zeros((DELAY + 1, batch, D))
    xs = xs.at[0, :, 0].set(bits)
    xs = xs.at[:, :, 1].set(jnp.where(jax.random.bernoulli(noise_key, 0.5, (DELAY + 1, batch)), 1.0, -1.0))
    xs = xs.at[-1, :, 2].set(1.0)
    return xs, bits > 0


def bit_accuracies(name: str) -> dict[str, np.ndarray]:
    """Held-out accuracy of core ``name`` after ``BIT_STEPS`` (or its ``BIT_STEPS_OF``) steps of each
    of ``OPTIMISERS`` on batches of ``memory_batch``, from each of ``LEARNING_SEEDS`` initialisations
    (optimiser -> [seeds]): all trained in one program (vmapped over the optimisers' settings and the
    initial parameters), which compiles once."""
    model = BitReader(cores.make(name, **LEARN[name]), name)
    xs, _ = memory_batch(jax.random.PRNGKey(0))
    params = jax.jit(jax.vmap(model.init, (0, None)))(jax.random.split(jax.random.PRNGKey(1), LEARNING_SEEDS), xs)

    def loss(params, key):
        xs, labels = memory_batch(key)
        logits = model.apply(params, xs)
        return optax.sigmoid_binary_cross_entropy(logits, labels).mean()

    def train(max_grad_norm, adam_eps, params):
        optimizer = make_optimizer(BIT_LR, max_grad_norm, adam_eps=adam_eps)

        def sgd(carry, key):
            params, opt_state = carry
            grads = jax.grad(loss)(params, key)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), None

        keys = jax.random.split(jax.random.PRNGKey(2), BIT_STEPS_OF.get(name, BIT_STEPS))
        (trained, _), _ = jax.lax.scan(sgd, (params, optimizer.init(params)), keys)
        return trained

    each = jax.vmap(jax.vmap(train, (None, None, 0)), (0, 0, None))  # [optimiser, seed]
    trained = jax.jit(each)(*map(jnp.asarray, zip(*OPTIMISERS.values())), params)
    xs, labels = memory_batch(jax.random.PRNGKey(99), batch=512)
    logits = jax.jit(jax.vmap(jax.vmap(model.apply, (0, None)), (0, None)))(trained, xs)
    return dict(zip(OPTIMISERS, np.asarray(jnp.mean((logits > 0) == labels, axis=-1))))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LEARN))
def test_learns_to_remember_a_bit_for_21_steps_under_adam_and_ppos_default_optimiser(name):
    """Every memory learns the bit from each of 3 initialisations (but those of ``SEED_SENSITIVE``); the
    memoryless control guesses (the check needs a memory). PPO's Adam ε (1e-5) is a thousand times
    Adam's usual: a core whose gradients start below it learns under PPO only from some
    initialisations (S6, issue 83), which the check at ε 1e-8 cannot see."""
    accuracy = optimised(bit_accuracies, name)  # optimiser -> [seeds]
    learned = {optimiser: values >= ACCURACY_THRESHOLD for optimiser, values in accuracy.items()}
    if name == "memoryless":
        assert np.all(np.stack(list(accuracy.values())) < 0.6), f"the memoryless control remembers the bit: {accuracy}"
    elif name in BELOW_PPO_EPS:
        assert learned["adam"].all(), f"{name}: accuracy {accuracy}"
        assert not learned["ppo defaults"].all(), (
            f"{name} now learns under PPO's defaults on every seed: take it out of BELOW_PPO_EPS ({accuracy})"
        )
    elif name in SEED_SENSITIVE:
        assert all(seeds.sum() >= 2 for seeds in learned.values()), f"{name}: accuracy {accuracy}"
        assert not all(seeds.all() for seeds in learned.values()), (
            f"{name} now learns on every seed: take it out of SEED_SENSITIVE ({accuracy})"
        )
    else:
        assert all(seeds.all() for seeds in learned.values()), f"{name}: accuracy {accuracy}"
