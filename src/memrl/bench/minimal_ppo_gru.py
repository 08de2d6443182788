"""A minimal hand-written PPO-GRU training loop on T-LN, the baseline of ``memrl bench throughput``.

Same shapes and work as memrl's PPO with ``core:gru --core.hidden 128``: 64 envs x 128-step
rollouts, encoder 256-256, GRU 128, head 256, 4 epochs x 4 minibatches split by env, Adam with
global-norm clipping. Only the environment comes from memrl; network, GAE and loss are written out
here in the plainest way, so the ratio to memrl's figure shows the framework's overhead.

    python -m memrl.bench.minimal_ppo_gru
"""

from __future__ import annotations

import time

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from memrl import envs

E, T, H, EPOCHS, MINIBATCHES = 64, 128, 128, 4, 4
GAMMA, LAMBDA, CLIP, VF, ENT = 0.98, 0.95, 0.2, 0.5, 0.01
env = envs.make("tmaze/T-LN")
params_env = env.default_params


class Net(nn.Module):
    @nn.compact
    def __call__(self, h, obs, reset):
        x = nn.relu(nn.Dense(256)(nn.relu(nn.Dense(256)(obs))))
        h = jnp.where(reset[..., None], 0.0, h)
        xr, xz, xn = jnp.split(nn.Dense(3 * H)(x), 3, -1)
        hr, hz, hn = jnp.split(nn.Dense(3 * H)(h), 3, -1)
        r, z = jax.nn.sigmoid(xr + hr), jax.nn.sigmoid(xz + hz)
        h = (1 - z) * jnp.tanh(xn + r * hn) + z * h
        y = nn.relu(nn.Dense(256)(h))
        return h, nn.Dense(4)(y), nn.Dense(1)(y)[..., 0]


net = Net()
scan_net = nn.scan(
    lambda m, h, inp: (lambda out: (out[0], out[1:]))(m(h, *inp)),
    variable_broadcast="params",
    split_rngs={"params": False},
)
optimizer = optax.chain(optax.clip_by_global_norm(0.5), optax.adam(5e-4, eps=1e-5))


def unroll(params, h, obs, resets):
    class Unroll(nn.Module):
        @nn.compact
        def __call__(self, h, obs, resets):
            return scan_net(Net(name="net"), h, (obs, resets))

    return Unroll().apply({"params": {"net": params["params"]}}, h, obs, resets)


def update(state, _):
    params, opt, env_state, obs, h, reset, key = state
    h0 = h

    def step(c, _):
        env_state, obs, h, reset, key = c
        key, ka, ke = jax.random.split(key, 3)
        h, logits, v = net.apply(params, h, obs, reset)
        a = jax.random.categorical(ka, logits)
        logp = jax.nn.log_softmax(logits)[jnp.arange(E), a]
        obs2, env_state, r, d, _ = jax.vmap(env.step, (0, 0, 0, None))(
            jax.random.split(ke, E), env_state, a[:, None], params_env
        )
        return (env_state, obs2, h, d, key), (obs, reset, a, logp, v, r, d)

    (env_state, obs, h, reset, key), traj = jax.lax.scan(step, (env_state, obs, h, reset, key), None, T)
    t_obs, t_reset, t_a, t_logp, t_v, t_r, t_d = traj
    _, _, last_v = net.apply(params, h, obs, reset)
    next_v = jnp.concatenate([t_v[1:], last_v[None]])
    delta = t_r + GAMMA * (1 - t_d) * next_v - t_v

    def gae(adv, x):
        d, dn = x
        adv = d + GAMMA * LAMBDA * (1 - dn) * adv
        return adv, adv

    _, adv = jax.lax.scan(gae, jnp.zeros(E), (delta, t_d), reverse=True)
    target = adv + t_v

    def loss(p, idx):
        _, (logits, v) = unroll(p, h0[idx], t_obs[:, idx], t_reset[:, idx])
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), t_a[:, idx, None], -1)[..., 0]
        a = adv[:, idx]
        a = (a - a.mean()) / (a.std() + 1e-8)
        ratio = jnp.exp(logp - t_logp[:, idx])
        pg = -jnp.mean(jnp.minimum(ratio * a, jnp.clip(ratio, 1 - CLIP, 1 + CLIP) * a))
        vc = t_v[:, idx] + jnp.clip(v - t_v[:, idx], -CLIP, CLIP)
        vl = 0.5 * jnp.mean(jnp.maximum((v - target[:, idx]) ** 2, (vc - target[:, idx]) ** 2))
        ent = -jnp.mean(jnp.sum(jax.nn.softmax(logits) * jax.nn.log_softmax(logits), -1))
        return pg + VF * vl - ENT * ent

    def epoch(c, _):
        params, opt, key = c
        key, k = jax.random.split(key)
        order = jax.random.permutation(k, E).reshape(MINIBATCHES, -1)

        def mb(c, idx):
            params, opt = c
            g = jax.grad(loss)(params, idx)
            u, opt = optimizer.update(g, opt, params)
            return (optax.apply_updates(params, u), opt), None

        (params, opt), _ = jax.lax.scan(mb, (params, opt), order)
        return (params, opt, key), None

    (params, opt, key), _ = jax.lax.scan(epoch, (params, opt, key), None, EPOCHS)
    return (params, opt, env_state, obs, h, reset, key), t_r.sum()


def init(key):
    k1, k2 = jax.random.split(key)
    obs, env_state = jax.vmap(env.reset, (0, None))(jax.random.split(k1, E), params_env)
    h = jnp.zeros((E, H))
    reset = jnp.ones(E, bool)
    params = net.init(k2, h, obs, reset)
    return (params, optimizer.init(params), env_state, obs, h, reset, key)


def measure(updates: int = 3) -> tuple[float, float]:
    """(compile seconds, environment steps per second after compile)."""
    run = jax.jit(lambda s: jax.lax.scan(update, s, None, updates))
    state = init(jax.random.PRNGKey(0))
    start = time.perf_counter()
    state, _ = jax.block_until_ready(run(state))
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(run(state))
    return compile_s, updates * E * T / (time.perf_counter() - start)


if __name__ == "__main__":
    compile_s, sps = measure()
    print(f"minimal PPO-GRU: compile {compile_s:.1f} s, {sps:,.0f} env steps/s")
