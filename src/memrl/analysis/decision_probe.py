"""Can a memory make a task's scored decision when it is told the answer? A supervised check.

Not an analysis from the papers. Cloning a task's oracle (``ImpalaConfig.teacher``) trains the walk
between decisions as well as the decision, and gives one labelled decision per episode of hundreds
of steps; where a clone stays at chance it leaves open whether its memory could learn the decision at
all, or how many labelled episodes it needs. This asks that alone, as ``ballet_memory_probe`` does for
Ballet: the oracle (a scripted policy that marks its decisions, ``ScriptedPolicy.decides``) drives
fresh episodes for ``frames`` steps, and a fresh agent of a run's config reads them (observations, the
oracle's previous actions and rewards, as a clone does) and is trained on the oracle's action at the
first step the oracle marks as a decision, τ:

    L = −log π(a*_τ | o_≤τ, a*_<τ)

An episode with no decision within ``frames`` steps is left out of L (and counted). Accuracy on
fresh episodes, against the chance of guessing among what the task offers, says whether the memory
holds what the decision needs, free of the walk, exploration and credit assignment.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import tyro

from memrl.analysis import ANALYSES
from memrl.analysis.chunked_training import CHUNK_STEPS, check_chunks, train_probe
from memrl.envs.base import ENVS
from memrl.envs.scripted_policy import scripted_episodes, scripted_policy
from memrl.learn.actor import ActorCriticLearner
from memrl.learn.run_config import RunConfig
from memrl.nn.compiled_init import compiled_init
from memrl.settings import Count, LearningRate, OutputFolder, Seed


class DecisionProbe:
    """The agent of ``config`` on environment ``env_name`` (a variant of the config's environment:
    its observation and rules, another level), trained on ``teacher``'s first decision."""

    what = "a decision probe"

    def __init__(self, config: RunConfig, env_name: str, frames: int, teacher: str = "oracle"):
        if frames < 1:
            raise ValueError(f"frames must be at least 1 (steps the teacher drives an episode), got {frames}")
        self.env = ENVS.variant(config.env, env_name)
        if self.env.action_bounds is not None:
            raise ValueError(f"the probe scores discrete decisions; {env_name} takes continuous actions")
        self.teacher = scripted_policy(env_name, self.env, teacher)
        if self.teacher.decides is None:
            raise ValueError(
                f"{env_name}'s scripted policy {teacher!r} marks no decisions (ScriptedPolicy.decides): the probe has no label"
            )
        self.env_name, self.frames = env_name, frames
        self.agent = ActorCriticLearner(config).agent.clone(reconstruct=False)

    def episodes(self, key, batch_size: int):
        """``batch_size`` fresh episodes of the teacher, cut at ``frames`` steps: (observations,
        previous actions, previous rewards, resets), time-major [T, B, ...], the step of each
        episode's first decision [B] and whether it has one [B]."""

        def emitted(obs, action, reward, ended, seen):
            return obs, action, reward, self.teacher.decides(seen) & ~ended

        observations, actions, rewards, decided = scripted_episodes(
            self.env, self.teacher, key, batch_size, self.frames, emitted
        )
        observations, actions, rewards, decided = jax.tree.map(
            lambda x: jnp.swapaxes(x, 0, 1), (observations, actions, rewards, decided)
        )
        previous = lambda x: jnp.concatenate([jnp.zeros_like(x[:1]), x[:-1]])
        resets = jnp.zeros(decided.shape, bool).at[0].set(True)
        inputs = (observations, previous(actions.astype(jnp.int32)), previous(rewards.astype(jnp.float32)), resets)
        return inputs, actions, jnp.argmax(decided, axis=0), decided.any(axis=0)

    def init(self, key):
        inputs, *_ = self.episodes(key, 1)
        return compiled_init(self.agent, "unroll", key, self.agent.initialize_carry((1,)), *inputs)

    def loss(self, params, key, batch_size: int):
        """(mean L over the episodes with a decision, (fraction of those decided as the teacher did,
        fraction of the batch with a decision)) on fresh episodes."""
        inputs, actions, first, has = self.episodes(key, batch_size)
        carry = self.agent.initialize_carry((batch_size,))
        _, (logits, _, _) = self.agent.apply(params, carry, *inputs, method=self.agent.unroll)
        at_decision = lambda x: jnp.take_along_axis(x, first.reshape((1, -1) + (1,) * (x.ndim - 2)), axis=0)[0]
        logits, target = jax.tree.map(at_decision, logits), at_decision(actions)
        weight = has / jnp.maximum(has.sum(), 1)
        loss = -(weight * self.agent.actions.log_prob(logits, target)).sum()
        right = jnp.all(self.agent.actions.greedy(logits) == target, axis=-1)
        return loss, ((weight * right).sum(), has.mean())

    def accuracy(self, params, key, episodes: int, batch_size: int) -> tuple[float, int]:
        """(fraction of the fresh episodes with a decision decided as the teacher did, how many had
        one) of ``episodes`` fresh episodes, ``batch_size`` at a time."""
        scored = jax.jit(lambda k: self.loss(params, k, batch_size)[1])
        right, had = zip(*(scored(k) for k in jax.random.split(key, max(1, episodes // batch_size))))
        counts = np.asarray(had) * batch_size
        return float(np.sum(np.asarray(right) * counts) / max(counts.sum(), 1)), int(counts.sum())


def command(
    run: tyro.conf.Positional[Path],
    env: str,
    frames: Count = 64,
    teacher: str = "oracle",
    steps: Count = 1000,
    batch_size: Count = 16,
    lr: LearningRate = 3e-4,
    seed: Seed = 0,
    test_episodes: Count = 512,
    chance: float | None = None,
    out: OutputFolder = Path("runs/analysis/decision-probe"),
) -> None:
    """Train a fresh agent of RUN's config, supervised, to make the first decision of ENV's teacher
    in episodes the teacher drives (a check of the memory without the walk or RL; not an analysis
    from the paper).

    Args:
        run: a run folder (or its config.json) whose agent (encoder, core, sizes) is probed, fresh.
        env: an environment of the same family as the run's, its settings kept (another level).
        frames: steps the teacher drives each episode; its first decision must fall within them.
        teacher: the environment's scripted policy whose marked decisions are the labels.
        steps: training steps.
        batch_size: episodes per step.
        lr: Adam learning rate.
        seed: seed of the initialisation and the episodes.
        test_episodes: fresh episodes scored after training.
        chance: the accuracy of a guess, drawn as a line (the task's, e.g. 1/3 for three objects).
        out: folder for decision_probe.png/json and the checkpoint (running the same command again
            continues an interrupted run).
    """
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memrl.console import console
    from memrl.run.folder import read_config

    check_chunks(steps, CHUNK_STEPS)
    config = read_config(run)
    probe = DecisionProbe(config, env, frames, teacher)
    settings = {
        "config": json.loads(config.to_json()),
        "env": env,
        "frames": frames,
        "teacher": teacher,
        "steps": steps,
        "batch_size": batch_size,
        "lr": lr,
        "seed": seed,
    }
    console.print(f"{env} / {config.core_name}: {frames} frames per episode, {steps} steps of {batch_size} episodes")
    train_key, test_key = jax.random.split(jax.random.PRNGKey(seed))
    params, curve = train_probe(
        probe,
        train_key,
        steps,
        batch_size,
        lr,
        checkpoint_dir=out,
        settings=settings,
        on_chunk=lambda done, loss, right, decided: console.print(
            f"  step {done}/{steps}  loss {loss:.3f}  batch accuracy {right:.2f}  with a decision {decided:.2f}"
        ),
    )
    accuracy, scored = probe.accuracy(params, test_key, test_episodes, batch_size)
    console.print(
        f"{config.core_name}: {accuracy:.3f} of {scored} fresh episodes decided as the {teacher} did"
        + (f" (chance {chance:.2f})" if chance is not None else "")
    )
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(np.arange(1, len(curve) + 1) * CHUNK_STEPS * batch_size, curve[:, 1], label=config.core_name)
    if chance is not None:
        ax.axhline(chance, color="gray", ls=":", label="chance")
    ax.set_title(f"{env}: the {teacher}'s first decision")
    ax.set_xlabel("labelled episodes")
    ax.set_ylabel("batch accuracy")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "decision_probe.png", dpi=120)
    plt.close(fig)
    result = {"settings": settings, "test_accuracy": accuracy, "test_episodes": scored, "curve": curve.tolist()}
    (out / "decision_probe.json").write_text(json.dumps(result))
    console.print(f"figure {out / 'decision_probe.png'}")


ANALYSES.register("decision-probe", command)
