#!/usr/bin/env bash
# The whole suite (README), in two parts, with the Python that runs this script's `python`:
#   1. the tests that time nothing, on two processes (pytest-xdist; a file's tests stay together);
#   2. the browser tests and the tests marked serial (wall-clock bounds, process exits), one at a time,
#      so that no other test shares the cores while they measure.
# Both parts always run; the script fails if either failed. Extra arguments (-x, -k ...) go to both parts;
# not -m, which would replace each part's own (the quick subset: python -m pytest -m "not slow and not browser and not serial").
#
# From the system the suite needs Debian's Chromium (browser tests) and PostgreSQL (the ledger's tests
# start a throw-away server in a temporary folder). As root with apt-get, a missing one is installed;
# otherwise its tests are skipped with the reason, and fail under CI=true, where a skip would hide a
# broken set-up.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3

have_chromium() { command -v chromium >/dev/null 2>&1; }
have_postgres() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
missing=()
have_chromium || missing+=(chromium)
have_postgres || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} (Debian's packages) for the browser and ledger tests"
    for attempt in 1 2; do
      if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; then
        break
      fi
      echo "apt-get install ${missing[*]} failed (attempt $attempt)" >&2
      sleep 10
    done
  else
    echo "not installed: ${missing[*]} (sudo apt-get install ${missing[*]}); their tests will be skipped" >&2
  fi
fi

# pytest's exit code 5 means that a part selected no test (for example with -k): not a failure.
part() {
  "$PYTHON" -m pytest "$@"
  local code=$?
  [ "$code" = 5 ] && code=0
  return "$code"
}

part -n 2 --dist loadfile -m "not browser and not serial" "$@"
first=$?
part -p no:xdist -m "browser or serial" "$@"
second=$?
echo "tests/run.sh: part 1 (parallel) exit $first, part 2 (browser and serial) exit $second"
[ "$first" = 0 ] && [ "$second" = 0 ]
