"""Pure JAX environments (``base``) and their registry; the built-in ones register when the
registry is first asked (``base.ENV_MODULES``), so importing this package starts nothing of JAX."""

from memrl.envs.base import ENVS, Environment, make, names, register

__all__ = ["ENVS", "Environment", "make", "names", "register"]
