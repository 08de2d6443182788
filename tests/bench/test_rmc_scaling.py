"""The RMC cost benchmark runs and reports what it says (no timing assertions)."""

from memrl.bench.rmc_scaling import rmc_cost_rows


def test_rows_cover_each_memory_shape_and_memory_grows_with_it():
    rows = rmc_cost_rows((1, 4), (2,), head_size=4, width=8, batch=2, train_steps=3, repeats=1)
    assert [(r.slots, r.heads, r.units) for r in rows] == [(1, 2, 8), (4, 2, 32)]
    assert all(min(r.step_ms, r.train_ms) > 0 for r in rows)
    assert rows[-1].step_mb > rows[0].step_mb and rows[-1].train_mb > rows[0].train_mb
