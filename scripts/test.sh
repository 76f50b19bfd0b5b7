#!/usr/bin/env bash
# Install everything the tests need into .venv and tools/, start the local test services that
# can run on this machine, and run the whole suite. Used as-is by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
npm ci --prefix tools/cypher-lint --no-audit --no-fund --loglevel=error

# System packages for the browser test of the HTML lineage picture and the Graphviz check.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=""
  command -v chromium >/dev/null || need="$need chromium"
  command -v dot >/dev/null || need="$need graphviz"
  if [ -n "$need" ]; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null \
      || echo "warning: could not install$need; those tests will skip" >&2
  fi
fi

# A real S3 server (Ceph RGW) for the listing tests, when the script for it is present.
if [ -x tests/services/ceph-rgw.sh ] || [ -f tests/services/ceph-rgw.sh ]; then
  if bash tests/services/ceph-rgw.sh; then
    export LINEAGEGRAPH_TEST_RGW="http://127.0.0.1:7480"
  else
    echo "warning: Ceph RGW did not start; its tests will skip" >&2
  fi
fi

exec .venv/bin/python -m pytest "$@"
