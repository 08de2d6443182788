"""Agents: observation encoder -> memory core -> heads."""

from memrl.agents.actor_critic import ActorCritic

__all__ = ["ActorCritic"]
