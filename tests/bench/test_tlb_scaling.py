"""The TLB benchmark runs and reports what it says (no timing assertions)."""

from memrl.bench.tlb_scaling import ratios, sequence_cost

SMALL = dict(d_model=16, mlp_dim=16, num_heads=2)


def test_the_transformers_working_memory_grows_with_the_square_of_the_sequence_and_tlbs_does_not():
    """XLA's working memory of the forward pass: the Transformer's attention spans the sequence
    (T² scores), TLB's only a chunk and the state."""
    transformer = [
        sequence_cost("transformer", SMALL | dict(chunk_size=t), t, batch=1, repeats=1, training=t == 512)
        for t in (128, 512)
    ]
    tlb = [
        sequence_cost("tlb", SMALL | dict(chunk_size=16, num_state=4), t, batch=1, repeats=1, training=t == 512)
        for t in (128, 512)
    ]
    assert transformer[1].inference_mb > 8 * transformer[0].inference_mb
    assert tlb[1].inference_mb < 4 * tlb[0].inference_mb
    assert min(min(cost) for cost in (transformer[1], tlb[1])) > 0
    infer_speed, infer_memory, train_speed, train_memory = ratios(tlb[1], transformer[1])
    assert infer_memory < 1 and min(infer_speed, train_speed, train_memory) > 0
