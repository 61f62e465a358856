#!/usr/bin/env sh
# A plain git hook (copy to .git/hooks/pre-commit) for projects without the pre-commit tool.
# Blocks the commit when a vetted mechanism no longer meets its spec (exit 1) or when the
# harness cannot run (exit 2).
set -e
vetdp verify randomized_response --impl mypkg.rr:make_randomized_response
