"""Optimized Unary Encoding, vetted with vetdp (a downstream example)."""

from oue_example.oue import estimate_oue_counts, make_oue, oue_count_variance

__all__ = ["make_oue", "estimate_oue_counts", "oue_count_variance"]
