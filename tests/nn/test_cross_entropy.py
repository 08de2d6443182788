"""The fused sigmoid cross-entropy against its definition, far into both tails."""

import jax
import numpy as np

from memrl.nn.cross_entropy import sigmoid_cross_entropy


def test_values_and_gradient_match_the_definition():
    logits = np.array([-80.0, -20.0, -3.0, -0.5, 0.0, 0.5, 3.0, 20.0, 80.0])
    for target in (0.0, 0.3, 1.0):
        targets = np.full_like(logits, target)
        p = 1.0 / (1.0 + np.exp(-logits))
        expected = -(targets * -np.logaddexp(0.0, -logits) + (1.0 - targets) * -np.logaddexp(0.0, logits))
        np.testing.assert_allclose(sigmoid_cross_entropy(logits, targets), expected, rtol=1e-6, atol=1e-6)
        gradient = jax.grad(lambda z: sigmoid_cross_entropy(z, targets).sum())(logits)
        np.testing.assert_allclose(gradient, p - targets, rtol=1e-6, atol=1e-6)
        target_gradient = jax.grad(lambda y: sigmoid_cross_entropy(logits, y).sum())(targets)
        np.testing.assert_allclose(target_gradient, -logits, rtol=1e-6)
