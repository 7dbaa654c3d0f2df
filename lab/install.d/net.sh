#!/usr/bin/env bash
# lab/install.d/net.sh -- the HTTP CONNECT proxy of the connectivity tests (Debian's tinyproxy). Idempotent.
set -euo pipefail
command -v tinyproxy >/dev/null ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tinyproxy; }
