"""memrl: memory systems for reinforcement-learning agents, in JAX.

Subpackages: ``cores`` (memory cores behind one contract), ``envs`` (pure JAX environments),
``agents`` (encoder -> core -> heads), ``learn`` (losses and trainers), ``analysis`` (the papers'
analyses) and ``experiments`` (named reproductions).
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    """``memrl.load_policy`` and ``memrl.load_predictor``: imported when first used, so that
    ``import memrl`` stays light."""
    if name == "load_policy":
        from memrl.run.policy import load_policy

        return load_policy
    if name == "load_predictor":
        from memrl.run.predictor import load_predictor

        return load_predictor
    raise AttributeError(f"module 'memrl' has no attribute {name!r}")
