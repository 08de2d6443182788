"""Losses (pure functions over one time stream) and trainers."""
