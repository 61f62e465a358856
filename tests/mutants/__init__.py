"""Deliberately wrong variants of the mechanisms: each must be rejected by ``vetdp verify``.

Every mutant takes the same arguments as the constructor it mimics and differs from it
in one stated defect.
"""
