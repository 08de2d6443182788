"""Analyses the papers use: gradient decay, signal-to-noise, planning measures, and probes of what a memory holds."""
