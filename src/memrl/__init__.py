"""memrl: memory systems for reinforcement-learning agents, in JAX.

Subpackages: ``cores`` (memory cores behind one contract), ``envs`` (pure JAX environments),
``agents`` (encoder -> core -> heads), ``learn`` (losses and trainers), ``analysis`` (the papers'
analyses) and ``experiments`` (named reproductions).
"""

__version__ = "0.1.0"
