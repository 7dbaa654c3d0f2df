#!/usr/bin/env bash
# lab/oidc/flow.sh -- full OAuth flow with curl: DCR -> authorize (PKCE S256 + resource) -> login + consent (browser.sh)
# -> code -> token (wrong verifier first) -> refresh. Env: AS, RES (required), SCOPE. Prints the access token last.
set -euo pipefail
AS=${AS:?}; RES=${RES:?}; REDIR=http://127.0.0.1:9/cb
py() { python3 -c "import json,sys,urllib.parse; $1" "${@:2}"; }
enc() { py 'print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
reg=$(curl -s -X POST "$AS/reg" -H 'Content-Type: application/json' -d '{"redirect_uris":["'$REDIR'"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none","client_name":"probe","scope":"mcp:tools mcp:read"}')
CID=$(echo "$reg" | py 'print(json.load(sys.stdin)["client_id"])'); echo "DCR client_id=$CID" >&2
VER=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
CH=$(printf %s "$VER" | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d '=')
Q="client_id=$CID&response_type=code&redirect_uri=$(enc $REDIR)&scope=$(enc "${SCOPE:-mcp:tools mcp:read}")&state=xyz&code_challenge=$CH&code_challenge_method=S256&resource=$(enc "$RES")"
loc=$("$(dirname "$0")/browser.sh" "$AS/auth?$Q"); echo "redirect: $loc" >&2
CODE=$(echo "$loc" | sed -n 's/.*[?&]code=\([^&]*\).*/\1/p')
T="grant_type=authorization_code&client_id=$CID&code=$CODE&redirect_uri=$(enc $REDIR)"
echo "wrong verifier: $(curl -s -X POST "$AS/token" -d "$T&code_verifier=wrongwrongwrongwrongwrongwrongwrongwrongwrong")" >&2
tok=$(curl -s -X POST "$AS/token" -d "$T&code_verifier=$VER&resource=$(enc "$RES")")
RT=$(echo "$tok" | py 'print(json.load(sys.stdin)["refresh_token"])')
ref=$(curl -s -X POST "$AS/token" -d "grant_type=refresh_token&client_id=$CID&refresh_token=$RT")
echo "refresh: $(echo "$ref" | py 'd=json.load(sys.stdin); print(sorted(d), d["refresh_token"] != sys.argv[1])' "$RT")" >&2
echo "$tok" | py 'print(json.load(sys.stdin)["access_token"])'
