"""IMPALA-style actor-critic with V-trace (Espeholt et al. 2018), end-to-end jitted like PPO.

Each update collects ``rollout_len`` steps from ``num_envs`` environments with the behaviour
parameters, unrolls the current parameters over the segment from its stored initial carry, and
takes one gradient step on

    L = −policy_coef · Σ A_t log π(a_t) + value_coef · ½ Σ (vs_t − v_t)² − entropy_coef · Σ H(π(·|x_t))
        + reconstruction_coef · Σ L_rec(x_t)

summed over the time steps and trajectories of the batch, as IMPALA's learner does, with the V-trace
targets vs and advantages A. The sum matters for RMSprop: its ε (1e-4 in the EPN paper, inside the
square root) is set for gradients of that scale; with the losses averaged instead, ε dominated the
squared-gradient average by orders of magnitude and an LSTM with the paper's settings stayed at the
random policy's return on the Memory&Planning Game for 5M steps. The reported losses are per step
(the sums divided by the batch's steps). With ``policy_lag`` = L the
actor acts with the parameters of L updates ago, as the actors of a distributed IMPALA do, so the
importance weights π/μ differ from 1 and the off-policy correction matters.

With a ``teacher`` (a scripted policy of the environment) the first ``clone_updates`` updates clone
it: the teacher acts, and the policy term becomes the cross-entropy −Σ log π(a_teacher) through the
same unroll from the stored carries (a teacher that marks its decision steps, ``ScriptedPolicy.decides``,
has those weighted by ``clone_decision_weight``); the value keeps learning by V-trace (its loss weighted by
``clone_value_coef`` while cloning), with the teacher taken as deterministic (log μ = 0, so
ρ = π(a_teacher) ≤ 1). With ``agent_share`` s > 0 (DAgger-style mixing) the agent's own sampled
action drives the environment with a probability rising to s over the cloning updates; the target is
still the teacher's action (a teacher that tracks its moves is told the action taken,
``ScriptedPolicy.took``), and V-trace takes the mixture as the behaviour:
μ(a) = (1 − s_t)·[a = a_teacher] + s_t·π(a).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from memrl.cores.base import reset_carry
from memrl.envs.scripted_policy import scripted_policy
from memrl.learn.actor import ActorCriticLearner, RunnerState, Segment
from memrl.learn.impala_config import ImpalaConfig
from memrl.learn.losses import vtrace
from memrl.learn.optimizers import make_optimizer


@struct.dataclass
class CloningRunnerState(RunnerState):
    """The runner of a run that first clones a teacher: also the teacher's memory per environment."""

    teacher_memory: Any = None


# Acting and learning compute log π in different programs, so on-policy log ρ is ±1e-7, not 0; a
# weight counts as clipped only when it exceeds ρ̄ by more than that.
RHO_ROUNDING = 1e-5


class Impala(ActorCriticLearner):
    """The pure functions of an IMPALA/V-trace run."""

    config: ImpalaConfig

    config_class = ImpalaConfig

    def __init__(self, config: ImpalaConfig):
        super().__init__(config)
        self.optimizer = make_optimizer(
            config.lr,
            config.max_grad_norm,
            config.optimizer,
            adam_eps=config.adam_eps,
            rmsprop_decay=config.rmsprop_decay,
            rmsprop_eps=config.rmsprop_eps,
            rmsprop_momentum=config.rmsprop_momentum,
            rmsprop_initial_scale=config.rmsprop_initial_scale,
        )
        self.teacher = scripted_policy(config.env_name, self.env, config.teacher) if config.teacher else None

    def init(self, key, params=None) -> RunnerState:
        runner = self.new_runner(key, self.optimizer, params)
        if self.teacher is None:
            return runner
        return CloningRunnerState(
            **vars(runner), teacher_memory=jax.vmap(self.teacher.initial_memory)(runner.env_state)
        )

    def cloning(self, runner: RunnerState) -> jax.Array:
        """Whether this update clones the teacher."""
        return runner.update < self.config.clone_updates

    def agent_share(self, update: jax.Array) -> jax.Array:
        """The probability that the agent's own action drives the environment at cloning ``update``:
        0 at the first, ``agent_share`` at the last."""
        return self.config.agent_share * update / max(self.config.clone_updates - 1, 1)

    def teach(self, runner: RunnerState):
        """``env_step``'s hook for ``runner``'s update: while cloning, the teacher's action in the
        agent's place, or with probability ``agent_share`` the agent's own, with log μ of the mixture;
        the teacher's action is the target either way."""
        cloning, share = self.cloning(runner), self.agent_share(runner.update)

        def act(runner: CloningRunnerState, action, logp, logits, key):
            fresh = jax.vmap(self.teacher.initial_memory)(runner.env_state)
            memory = reset_carry(runner.teacher_memory, fresh, runner.reset)  # a new episode, a fresh memory
            seen = runner.env_state if self.teacher.reads_state else runner.obs
            taught, memory = jax.vmap(self.teacher.act)(jax.random.split(key, self.config.num_envs), seen, memory)
            own = jax.random.bernoulli(jax.random.fold_in(key, 1), share, (self.config.num_envs,))
            acted = jnp.where(own[:, None], action, taught)
            runner = runner.replace(teacher_memory=jax.vmap(self.teacher.took)(memory, acted))
            same = jnp.all(acted == taught, axis=-1)
            mixed_logp = jnp.log((1 - share) * same + share * jnp.exp(self.agent.actions.log_prob(logits, acted)))
            decided = jax.vmap(self.teacher.decides)(seen) if self.teacher.decides is not None else False
            weight = jnp.where(cloning & decided, self.config.clone_decision_weight, jnp.ones(self.config.num_envs))
            return (
                runner,
                jnp.where(cloning, acted, action),
                jnp.where(cloning, mixed_logp, logp),
                jnp.where(cloning, taught, action),
                weight,
            )

        return act

    def _loss(self, params, segment: Segment, cloning=False):
        c = self.config
        traj = segment.transitions
        logits, values, reconstruction = self.unroll(params, segment.initial_carry, traj)
        logp = self.agent.actions.log_prob(logits, traj.action)
        next_values = jnp.concatenate([values[1:], segment.bootstrap_value[None]], axis=0)
        discount = c.gamma * (1.0 - traj.done)
        targets = jax.vmap(vtrace, in_axes=(1, 1, 1, 1, 1, None, None), out_axes=1)(
            c.reward_scale * traj.reward,
            discount,
            values,
            next_values,
            logp - traj.logp,
            c.rho_bar,
            c.c_bar,
        )  # vtrace's outputs carry no gradient
        taught = logp if traj.target is None else self.agent.actions.log_prob(logits, traj.target)
        if traj.target_weight is not None:
            taught = traj.target_weight * taught
        policy_loss = jnp.where(cloning, -jnp.mean(taught), -jnp.mean(targets.pg_advantage * logp))
        value_loss = 0.5 * jnp.mean(jnp.square(targets.vs - values))
        entropy = self.agent.actions.entropy(logits).mean()
        reconstruction = reconstruction.mean()
        value_coef = (
            c.value_coef if c.clone_value_coef is None else jnp.where(cloning, c.clone_value_coef, c.value_coef)
        )
        total = values.size * self.total_loss(
            policy_loss, value_loss, entropy, reconstruction, value_coef
        )  # the sum over the batch
        log_rho = logp - traj.logp
        return total, {
            "policy_loss": policy_loss,
            "value_loss": value_loss,
            "entropy": entropy,
            "reconstruction_loss": reconstruction,
            "mean_abs_log_rho": jnp.mean(jnp.abs(log_rho)),
            "clipped_rho_fraction": jnp.mean(log_rho > jnp.log(c.rho_bar) + RHO_ROUNDING),
        }

    def act(self, runner: RunnerState):
        """A rollout with the behaviour parameters (the teacher acting while the agent clones it)."""
        teach = self.teach(runner) if self.teacher is not None else None
        runner, segment = self.rollout(runner, self.acting_params(runner), teach)
        return runner, segment, None

    def learn(self, runner: RunnerState, segment: Segment, key=None):
        """One gradient step on the V-trace loss over ``segment`` (no randomness: ``key`` is None)."""
        cloning = self.cloning(runner) if self.teacher is not None else False
        grads, info = jax.grad(self._loss, has_aux=True)(runner.params, segment, cloning)
        updates, opt_state = self.optimizer.update(grads, runner.opt_state, runner.params)
        runner = self.after_learning(runner, optax.apply_updates(runner.params, updates), opt_state)
        return runner, {**self.episode_metrics(runner, segment), **info}
