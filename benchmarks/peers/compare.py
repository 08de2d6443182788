"""memrl's recurrent PPO against memorax's and sb3-contrib's on T-LN, measured side by side.

The same task and sizes for all: tmaze/T-LN (memrl's; memorax reads it through
``memrl.envs.as_gymnax.AsGymnax``, sb3-contrib through ``memrl.envs.gymnasium_adapter.GymnasiumEnv``),
64 environments x 128-step rollouts, 4 epochs x 4 minibatches, an encoder of 256-256, a recurrent
cell of 128 and a 256 head, Adam with global-norm clipping. Each trainer is timed after its compile
(or, for PyTorch, after one warm-up update), in this process, one after another:

    pip install -e ".[peers]"            # memorax, sb3-contrib and PyTorch: a separate environment
    taskset -c 0 python benchmarks/peers/compare.py --updates 3

Equal work: memorax trains a separate actor network and critic network (two encoders, two cells),
so it is compared with memrl's agent with ``separate_critic``; sb3-contrib (``shared_lstm=True``)
shares the encoder and the cell, so it is compared with memrl's shared agent. What differs, because
the peers cannot be told otherwise:
- memorax keeps two optimisers (one per network); memrl one over both.
- sb3-contrib's RecurrentPPO has only an LSTM; its GRU row is missing. Its environments step one
  by one in Python (a ``DummyVecEnv`` of 64 gymnasium envs, each a jitted JAX step), its network runs
  in PyTorch (threads set to 1 for a one-core comparison).
"""

from __future__ import annotations

import argparse
import time

import jax

E, T, EPOCHS, MINIBATCHES, HIDDEN, WIDTH = 64, 128, 4, 4, 128, 256
GAMMA, LAMBDA, CLIP, VF, ENT, LR = 0.98, 0.95, 0.2, 0.5, 0.01, 5e-4
ENV = "tmaze/T-LN"


def measure_memrl(cell: str, updates: int, separate_critic: bool) -> tuple[float, float]:
    from memrl.bench.throughput import measure_memrl

    return measure_memrl(cell, updates, separate_critic=separate_critic, hidden=HIDDEN)


def measure_memorax(cell: str, updates: int) -> tuple[float, float]:
    import flax.linen as nn
    import optax
    from memorax.algorithms.ppo import PPO, PPOConfig
    from memorax.networks.feature_extractor import FeatureExtractor
    from memorax.networks.heads import Categorical, VNetwork
    from memorax.networks.mlp import MLP
    from memorax.networks.network import Network
    from memorax.networks.sequence_models.rnn import RNN

    from memrl.envs.as_gymnax import AsGymnax

    class PreGymnax1Step(AsGymnax):
        """memorax 1.0.1 steps environments the way gymnax did before 1.0: (obs, state, reward, done, info)."""

        def step(self, key, state, action, params=None):
            obs, state, reward, terminated, truncated, info = super().step(key, state, action, params)
            return obs, state, reward, terminated | truncated, info

    env = PreGymnax1Step(ENV)

    class Head(nn.Module):
        output: nn.Module

        @nn.compact
        def __call__(self, x, **kwargs):
            return self.output(MLP(WIDTH)(x))

    def network(output: nn.Module) -> Network:
        rnn_cell = nn.GRUCell(HIDDEN) if cell == "gru" else nn.OptimizedLSTMCell(HIDDEN)
        return Network(feature_extractor=FeatureExtractor(MLP((WIDTH, WIDTH))), torso=RNN(rnn_cell), head=Head(output))

    optimizer = optax.chain(optax.clip_by_global_norm(0.5), optax.adam(LR, eps=1e-5))
    config = PPOConfig(
        name="peers",
        num_envs=E,
        num_eval_envs=E,
        num_steps=T,
        gamma=GAMMA,
        gae_lambda=LAMBDA,
        num_minibatches=MINIBATCHES,
        update_epochs=EPOCHS,
        normalize_advantage=True,
        clip_coef=CLIP,
        clip_vloss=True,
        ent_coef=ENT,
        vf_coef=VF,
    )
    agent = PPO(
        config,
        env,
        env.default_params,
        network(Categorical(env.action_space().n)),
        network(VNetwork()),
        optimizer,
        optimizer,
    )
    key, state = agent.init(jax.random.PRNGKey(0))
    steps = updates * E * T
    start = time.perf_counter()
    key, state, _ = jax.block_until_ready(agent.train(key, state, steps))
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(agent.train(key, state, steps))
    return compile_s, steps / (time.perf_counter() - start)


def measure_sb3(updates: int) -> tuple[float, float]:
    import torch
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from memrl import envs
    from memrl.envs.gymnasium_adapter import GymnasiumEnv

    torch.set_num_threads(1)

    class Encoder(BaseFeaturesExtractor):
        def __init__(self, observation_space):
            super().__init__(observation_space, WIDTH)
            inputs = observation_space.shape[0]
            self.net = torch.nn.Sequential(
                torch.nn.Linear(inputs, WIDTH), torch.nn.ReLU(), torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()
            )

        def forward(self, obs):
            return self.net(obs)

    env = envs.make(ENV)  # one environment object: the 64 adapters share its compiled steps
    vec = DummyVecEnv([lambda: GymnasiumEnv(env) for _ in range(E)])
    model = RecurrentPPO(
        "MlpLstmPolicy",
        vec,
        n_steps=T,
        batch_size=E * T // MINIBATCHES,
        n_epochs=EPOCHS,
        learning_rate=LR,
        gamma=GAMMA,
        gae_lambda=LAMBDA,
        clip_range=CLIP,
        ent_coef=ENT,
        vf_coef=VF,
        max_grad_norm=0.5,
        device="cpu",
        seed=0,
        policy_kwargs=dict(
            features_extractor_class=Encoder,
            lstm_hidden_size=HIDDEN,
            shared_lstm=True,
            enable_critic_lstm=False,
            net_arch=dict(pi=[WIDTH], vf=[WIDTH]),
        ),
    )
    start = time.perf_counter()
    model.learn(E * T)  # one update: warms up the jitted environment steps
    warm_s = time.perf_counter() - start
    start = time.perf_counter()
    model.learn(updates * E * T, reset_num_timesteps=False)
    return warm_s, updates * E * T / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--updates", type=int, default=3, help="updates timed per trainer (64 x 128 environment steps each)"
    )
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["memrl", "memorax", "sb3"], help="trainers not to run"
    )
    args = parser.parse_args()
    rows = []  # (trainer, critic, cell, first s, env steps/s)
    if "memrl" not in args.skip:
        rows += [
            ("memrl", critic, cell, *measure_memrl(cell, args.updates, critic == "separate"))
            for critic in ("shared", "separate")
            for cell in ("gru", "lstm")
        ]
    if "memorax" not in args.skip:
        rows += [("memorax", "separate", cell, *measure_memorax(cell, args.updates)) for cell in ("gru", "lstm")]
    if "sb3" not in args.skip:
        rows.append(("sb3-contrib", "shared", "lstm", *measure_sb3(args.updates)))
    memrl = {(critic, cell): sps for trainer, critic, cell, _, sps in rows if trainer == "memrl"}
    print(
        f"PPO on {ENV}, {E} envs x {T} steps, {EPOCHS} epochs x {MINIBATCHES} minibatches, cell {HIDDEN}, {jax.default_backend()}, {args.updates} updates timed"
    )
    print(
        f"{'trainer':<12} {'critic':<9} {'cell':<5} {'compile/warm-up s':>18} {'env steps/s':>12} {'memrl (same critic) / trainer':>30}"
    )
    for trainer, critic, cell, first_s, sps in rows:
        ratio = f"{memrl[critic, cell] / sps:.2f}" if (critic, cell) in memrl else "-"
        print(f"{trainer:<12} {critic:<9} {cell:<5} {first_s:>18.1f} {sps:>12,.0f} {ratio:>30}")


if __name__ == "__main__":
    main()
