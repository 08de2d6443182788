"""Pure JAX environments (``base``) and their registry; importing this package registers them."""

from memrl.envs import (
    ballet,
    boxworld,
    graph_nav,
    gymnax_adapter,
    host_environment,
    memory_planning,
    minecraft_chicken,
    minecraft_maze,
    minipacman,
    object_permanence,
    passive_visual_match,
    tmaze,
    word_learning,
)
from memrl.envs.base import ENVS, Environment, make, names, register

__all__ = ["ENVS", "Environment", "make", "names", "register"]
