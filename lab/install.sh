#!/usr/bin/env bash
# lab/install.sh -- install every lab target (idempotent). Needs python3 (3.11) with venv, node 20 + npm, root for apt.
# Safe to re-run: venvs are created once, pip skips satisfied pins, npm ci reinstalls only when the lock changed.
set -euo pipefail
cd "$(dirname "$0")"
# apt only for what is missing (naming an installed package would upgrade it, e.g. openssl and libssl3)
apt_pkgs=()
command -v nginx >/dev/null || apt_pkgs+=(nginx-light)
command -v openssl >/dev/null || apt_pkgs+=(openssl)
command -v curl >/dev/null || apt_pkgs+=(curl ca-certificates)   # lab/oidc/browser.sh plays the user with curl
command -v chromium >/dev/null || apt_pkgs+=(chromium)   # renders the HTML report in a test (headless)
command -v xmllint >/dev/null || apt_pkgs+=(libxml2-utils)   # scripts/validate-formats.sh validates the XCCDF report against its XSD
python3 -c 'import venv, ensurepip' 2>/dev/null || apt_pkgs+=(python3-venv)
[ ${#apt_pkgs[@]} = 0 ] ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}"; }
venv() { [ -x "$1/bin/python" ] || python3 -m venv "$1"; "$1/bin/pip" install -q --disable-pip-version-check "$2"; }
venv .venv-mcp2    'mcp[cli]==2.3.0'
venv .venv-mcp1    'mcp==1.30.0'
venv .venv-fastmcp 'fastmcp==4.2.3'
venv .venv-formats 'junitparser==5.0.3'   # reads the JUnit report back in the report-format tests
venv .venv-dsse 'securesystemslib[crypto]==1.6.0'   # verifies mcp-grade's signed statements (scripts/verify-statement.py)
npm_install() { # npm ci from the committed lock (plain npm install only when no lock exists yet); a stamp skips reruns
  local sum; [ -f package-lock.json ] || { npm install --no-audit --no-fund --loglevel=error; return; }
  sum=$(sha256sum package-lock.json | cut -d' ' -f1)
  [ "$(cat node_modules/.lab-lock-sha256 2>/dev/null)" = "$sum" ] && return 0
  npm ci --no-audit --no-fund --loglevel=error && echo "$sum" >node_modules/.lab-lock-sha256; }
(cd ts2  && npm_install)
(cd oidc && npm_install)
(cd formats && npm_install)   # the SARIF 2.1.0 schema the report tests validate against
# Further targets each install from their own script (lab/install.d/*.sh, run in lab/ in name order).
for x in install.d/*.sh; do [ -e "$x" ] && bash "$x"; done
