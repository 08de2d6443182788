"""Agents: observation encoder -> memory core -> heads."""

from memrl.agents.actor_critic import ActorCritic
from memrl.agents.agent_spec import AgentSpec

__all__ = ["ActorCritic", "AgentSpec"]
