#!/usr/bin/env bash
# lab/oidc/browser.sh AUTHORIZE_URL [--deliver] -- plays the user against oidc-provider's devInteractions (login, consent),
# prints the final redirect to the client's redirect_uri (?code=..&state=..&iss=..); --deliver also GETs it (the client's catcher).
set -euo pipefail
URL=$1; AS=$(echo "$URL" | sed -E 's#^(https?://[^/]+).*#\1#'); CJ=$(mktemp); PAGE=$(mktemp)
trap 'rm -f "$CJ" "$PAGE"' EXIT
c() { curl -s -c "$CJ" -b "$CJ" "$@"; }
loc=$(c -o /dev/null -w '%{redirect_url}' "$URL")
for _ in 1 2 3 4 5 6 7 8; do
  case "$loc" in "$AS"/*) ;; *) break;; esac          # left the AS: this is the redirect to the client
  nxt=$(c -o "$PAGE" -w '%{redirect_url}' "$loc")
  if [ -n "$nxt" ]; then loc=$nxt; continue; fi
  action=$(sed -n 's/.*<form[^>]*action="\([^"]*\)".*/\1/p' "$PAGE" | head -1)
  case "$action" in /*) action=$AS$action;; esac
  prompt=$(sed -n 's/.*name="prompt" value="\([^"]*\)".*/\1/p' "$PAGE" | head -1)
  case "$prompt" in
    login)   loc=$(c -o /dev/null -w '%{redirect_url}' -X POST "$action" -d "prompt=login&login=${LOGIN:-alice}&password=x");;
    consent) loc=$(c -o /dev/null -w '%{redirect_url}' -X POST "$action" -d 'prompt=consent');;
    *) echo "unexpected page: $(head -c 300 "$PAGE")" >&2; exit 1;;
  esac
done
case "$loc" in "$AS"/*|"") echo "no redirect to the client (last: $loc)" >&2; exit 1;; esac
echo "$loc"
[ "${2:-}" = --deliver ] && curl -s -o /dev/null "$loc"
exit 0
