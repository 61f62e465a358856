"""Analysis of the buffling mechanism (seed 004): flip every bit of k Bloom filters, shuffle the columns.

* :mod:`~vetdp.buffling.snr` — Part I, signal-to-noise ratio of incremental logo changes.
* :mod:`~vetdp.buffling.one_bf` — Part II, one Bloom filter: the loss three ways.
* :mod:`~vetdp.buffling.certified` — Part II at scale: certified pmf and ratio enclosures up to m = 10⁷.
* :mod:`~vetdp.buffling.one_bf_delta` — Part II at scale: certified ε(δ) per y_d (hockey-stick) up to m = 10⁷.
* :mod:`~vetdp.buffling.many_bf`, :mod:`~vetdp.buffling.bounds` — Part III, certified δ(ε), ε(δ).
* :mod:`~vetdp.buffling.logo_counts` — Part III exactly: ε(δ) by enumerating the output logo counts, and a
  conditional bracket beyond enumeration (``bounds.certified_epsilon`` picks the finest method that fits).
* :mod:`~vetdp.buffling.category_chain` — Part III at the seed's scale: monotone category chains on a grid,
  a certified ε(δ) bracket within 1% where conditioning runs out.
* :mod:`~vetdp.buffling.vet` — ``vetdp buffling vet``: a user's ratio, pmf or ε(δ) against certified values.
* :mod:`~vetdp.buffling.montecarlo` — the document's simulation, with confidence intervals.
* :mod:`~vetdp.buffling.search` — ``estimate_flip_prob``.
* :mod:`~vetdp.buffling.heuristic` — exhaustive test of the document's worst-pair heuristic.

The mechanism itself is :mod:`vetdp.impl.buffling`. Proof and findings: proofs/buffling.md.
"""
