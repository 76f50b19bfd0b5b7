#!/usr/bin/env bash
# Build tools/dbt/.venv with dbt-core, dbt-snowflake and dbt-duckdb 1.10 (the dbt tests' own
# dbt). Quick when it is already there with the wanted versions.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=tools/dbt/.venv
want='dbt-core>=1.10,<1.11 dbt-snowflake>=1.10,<1.11 dbt-duckdb>=1.10,<1.11'
stamp="$venv/.lineagegraph-wants"
if [ -x "$venv/bin/dbt" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# shellcheck disable=SC2086  # the wanted requirements are separate words
"$venv/bin/python" -m pip install -q $want
"$venv/bin/dbt" --version >/dev/null
echo "$want" >"$stamp"
