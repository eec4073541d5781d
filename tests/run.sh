#!/usr/bin/env bash
# The whole suite, as CI runs it (README), in two parts:
#   1. the tests that time nothing, on two processes (pytest-xdist; a file's tests stay together);
#   2. the browser tests and the tests marked serial (wall-clock bounds, process exits), one at a time,
#      so that no other test shares the cores while they measure.
# `python -m pytest` runs the same tests in one process, more slowly. Extra arguments (-x, -k ...) go to both
# parts; not -m, which would replace each part's own (a quick run: python -m pytest -m "not slow").
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pytest -n 2 --dist loadfile -m "not browser and not serial" "$@"
python3 -m pytest -p no:xdist -m "browser or serial" "$@"
