"""The HTM scaling benchmark runs and reports what it says (no timing assertions)."""

from memrl.bench.htm_scaling import htm_scaling_rows


def test_htm_scaling_rows_cover_each_past_and_trxl_memory_grows_with_it():
    rows = htm_scaling_rows((32, 128), width=16, layers=1, chunk_size=8, k=2, repeats=1)
    assert [row[0] for row in rows] == [32, 128]
    for past, htm_ms, trxl_ms, ratio, htm_mb, trxl_mb in rows:
        assert htm_ms > 0 and trxl_ms > 0 and abs(ratio - trxl_ms / htm_ms) < 1e-9
    assert rows[1][5] > rows[0][5]  # TrXL's cache is the attended past
