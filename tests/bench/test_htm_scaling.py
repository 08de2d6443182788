"""The HTM scaling benchmark runs and reports what it says (no timing assertions)."""

from memrl.bench.htm_scaling import htm_scaling_rows


def test_htm_scaling_rows_cover_each_past_and_trxl_memory_grows_with_it():
    rows = htm_scaling_rows((32, 128), width=16, layers=1, chunk_size=8, k=2, train_batch=2, train_steps=4, repeats=1)
    assert [row.past for row in rows] == [32, 128]
    for row in rows:
        assert min(row.htm_step_ms, row.trxl_step_ms, row.htm_train_ms, row.trxl_train_ms) > 0
    assert rows[1].trxl_step_mb > rows[0].trxl_step_mb  # TrXL's cache is the attended past
    assert rows[1].trxl_train_mb > rows[0].trxl_train_mb  # and its attention during learning spans it
