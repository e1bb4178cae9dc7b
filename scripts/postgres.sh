#!/usr/bin/env bash
# PostgreSQL for the tests of the gateway's shared credential store (mcp-auth feature
# `shared-store`): installs the distribution's package (apt-get, as root or through
# passwordless sudo) when initdb and postgres are missing. Nothing is started here: each
# test starts its own server on a loopback port with a temporary data folder, as an
# unprivileged user when it runs as root (mcp_testkit::postgres::PostgresFixture).
#
#   bash scripts/postgres.sh    exit 0 when PostgreSQL is installed (now or before)
set -uo pipefail

postgres_installed() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [[ -x $dir/initdb && -x $dir/postgres ]] && return 0
  done
  command -v initdb >/dev/null && command -v postgres >/dev/null
}

if ! postgres_installed && command -v apt-get >/dev/null; then
  as_root=()
  if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  fi
  if [[ $(id -u) -eq 0 || ${#as_root[@]} -gt 0 ]]; then
    install=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql)
    "${install[@]}" >/dev/null 2>&1 || { "${as_root[@]}" apt-get update -q >/dev/null 2>&1 && "${install[@]}" >/dev/null; }
  fi
fi

if postgres_installed; then
  echo "PostgreSQL is installed"
else
  echo "PostgreSQL is not installed and could not be (apt-get as root or through sudo)" >&2
  exit 1
fi
