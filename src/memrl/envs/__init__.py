"""Pure JAX environments (``base``) and their registry; importing this package registers them."""

from memrl.envs.base import ENVS, Environment, make, names, register
from memrl.envs import ballet, boxworld, graph_nav, minecraft_chicken, minecraft_maze, minipacman, gymnax_adapter, host_environment, memory_planning, object_permanence, passive_visual_match, tmaze, word_learning  # noqa: F401  (registration)

__all__ = ["ENVS", "Environment", "make", "names", "register"]
