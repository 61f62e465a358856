"""Directed-rounding float64 arithmetic and privacy-constant expressions."""
