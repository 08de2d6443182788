"""Shared layers: attention with relative positions, gating."""
