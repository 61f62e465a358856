"""vetdp's test suite (a package, so that `tests.mutants` is ours even where a dependency installs a top-level
`tests` package of its own, as diffprivlib 0.6.6 does)."""
