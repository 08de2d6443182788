"""The unroll table's arithmetic: FLOPs per step counted whole where XLA sees the whole unroll, and
from one step's gradient where a loop over time hides all but one body from its cost analysis."""

import pytest

from memrl.bench.unroll_scaling import BATCH, WIDTH, unroll_gradient_cost

LENGTH = 32


def test_the_lstms_count_per_step_is_its_three_matrix_products():
    ms, _, flops = unroll_gradient_cost("lstm", LENGTH, repeats=1)
    product = 2 * BATCH * (2 * WIDTH) * (4 * WIDTH)  # [x, h] times the gates' kernel
    # forward, the kernel's gradient and the gradient into [x, h] (carried back through time)
    assert 3 * product <= flops <= 1.1 * 3 * product and ms > 0


def test_a_sequential_scan_is_counted_per_step_and_an_associative_one_costs_more():
    sequential = [unroll_gradient_cost("lru", n, repeats=1, scan="sequential")[2] for n in (LENGTH, 2 * LENGTH)]
    associative = [unroll_gradient_cost("lru", n, repeats=1, scan="associative")[2] for n in (LENGTH, 2 * LENGTH)]
    assert sequential[0] == sequential[1]  # one step's count, whatever T
    assert associative[1] == pytest.approx(associative[0], rel=0.1)  # the whole unroll's over T
    assert all(a > s for a, s in zip(associative, sequential))  # the scan's combine levels do extra work
