"""Analyses the papers use: learning curves, gradient decay, signal-to-noise."""
