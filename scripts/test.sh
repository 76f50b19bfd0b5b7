#!/usr/bin/env bash
# Install everything the tests need into their own virtualenv (.venv-test, or
# $LINEAGEGRAPH_TEST_VENV) and tools/, start the local test services that can run on this
# machine, and run the whole suite. Used as-is by CI (.ci/run).
#
# Never .venv: that is the user's (the README's first command installs lineagegraph there), and
# reinstalling it as an editable dev install under a running `lineagegraph` broke its imports.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${LINEAGEGRAPH_TEST_VENV:-.venv-test}"
if [ "$(realpath -m "$venv")" = "$(realpath -m .venv)" ]; then
  echo "error: the tests' virtualenv must not be .venv (the user's); unset LINEAGEGRAPH_TEST_VENV" >&2
  exit 2
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -e '.[dev]'
npm ci --prefix tools/cypher-lint --no-audit --no-fund --loglevel=error

# dbt in its own venv (tools/dbt/.venv), so its pins cannot disturb the product's: the dbt tests
# run the real `dbt` from there. The 1.10 line installs and parses offline; 1.12 does not.
bash scripts/dbt-venv.sh || echo "warning: could not install dbt; the dbt tests will skip" >&2

# System packages for the browser tests (the HTML lineage picture; the explorer, through
# chromium-driver), the Graphviz check, Prometheus's promtool (the shipped alerting rules) and
# Alertmanager with amtool (the alert chain test).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=""
  command -v chromium >/dev/null || need="$need chromium"
  command -v chromedriver >/dev/null || need="$need chromium-driver"
  command -v dot >/dev/null || need="$need graphviz"
  command -v promtool >/dev/null || need="$need prometheus"
  command -v amtool >/dev/null || need="$need prometheus-alertmanager"
  if [ -n "$need" ]; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null \
      || echo "warning: could not install$need; those tests will skip" >&2
  fi
fi

# A real S3 server (Ceph RGW) for the listing tests: this run's own, in its own directory on
# free ports, stopped (all its daemons) however the script ends.
rgw_dir=""
stop_services() {
  if [ -n "$rgw_dir" ]; then
    bash tests/services/ceph-rgw.sh stop "$rgw_dir" >/dev/null 2>&1 || true
    rm -rf "$rgw_dir"
  fi
}
trap stop_services EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
rgw_dir=$(mktemp -d "${TMPDIR:-/tmp}/lineagegraph-test-rgw.XXXXXX")
if bash tests/services/ceph-rgw.sh start "$rgw_dir"; then
  LINEAGEGRAPH_TEST_RGW=$(cat "$rgw_dir/endpoint")
  export LINEAGEGRAPH_TEST_RGW
else
  echo "warning: Ceph RGW did not start; its tests will skip" >&2
  unset LINEAGEGRAPH_TEST_RGW
fi

# Two workers (pytest-xdist), each taking whole modules so a module's fixtures start once: most
# tests wait on a server or a subprocess, so two cores run the suite in about half the time.
# LINEAGEGRAPH_TEST_WORKERS=0 runs in one process; an explicit -n in the arguments wins.
workers=(-n "${LINEAGEGRAPH_TEST_WORKERS:-2}" --dist loadfile)
for arg in "$@"; do
  case "$arg" in -n|-n*|--numprocesses*) workers=() ;; esac
done

# Not exec: the EXIT trap must run after pytest; the script exits with pytest's status.
status=0
"$venv/bin/python" -m pytest "${workers[@]}" "$@" || status=$?
exit "$status"
