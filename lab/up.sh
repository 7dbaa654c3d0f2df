#!/usr/bin/env bash
# lab/up.sh -- start every target on free loopback ports; writes lab/run/env (for tests) and lab/run/pids. Needs lab/install.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ ! -s "$RUN/pids" ] || { echo "already up: $RUN/pids" >&2; exit 1; }
read -r PY2 PY2SLJ PY2NODNS PY1 FM FMAUTO TS2 TS2REJ PAGED AS RS MOD LEG EXP SS T13 PLAIN REDIR SSRV NOSTORE SLOPPY WRONG ASL RSL RSBAD ASU RSU STG STGG FILES FILESNAIVE ASN RSN <<<"$(free_ports 33)"
V2=$LAB/.venv-mcp2/bin/python; V1=$LAB/.venv-mcp1/bin/python; FMC=$LAB/.venv-fastmcp/bin/fastmcp
lab_start py2        $PY2      "$LAB/py2"      "$V2" server.py $PY2
lab_start py2-sl-json $PY2SLJ  "$LAB/py2"      "$V2" server.py $PY2SLJ --stateless --json
lab_start py2-nodns  $PY2NODNS "$LAB/py2"      "$V2" server.py $PY2NODNS --no-dns-protect
lab_start py1        $PY1      "$LAB/py1"      "$V1" server.py $PY1
lab_start fastmcp    $FM       "$LAB/fastmcp"  "$FMC" run server.py -t http --host 127.0.0.1 -p $FM --no-banner
lab_start fastmcp-auto $FMAUTO "$LAB/fastmcp"  env FASTMCP_HTTP_HOST_ORIGIN_PROTECTION=auto \
                                               "$FMC" run server.py -t http --host 127.0.0.1 -p $FMAUTO --no-banner
lab_start ts2        $TS2      "$LAB/ts2"      node server.mjs $TS2
lab_start ts2-reject $TS2REJ   "$LAB/ts2"      node server.mjs $TS2REJ --reject-legacy --guards
lab_start py2-paged  $PAGED    "$LAB/py2-paged" "$V2" server.py $PAGED
lab_start py2-sloppy $SLOPPY   "$LAB/py2-sloppy" "$V2" server.py $SLOPPY
lab_start oidc-as    $AS       "$LAB/oidc"     node as.js $AS http://127.0.0.1:$RS/mcp
lab_start py2-auth   $RS       "$LAB/py2-auth" "$V2" server.py $RS http://127.0.0.1:$AS
# second AS+RS pair: 7200 s access tokens carrying an extra audience, and an RS that accepts aud merely containing it
lab_start oidc-as-long $ASL    "$LAB/oidc"     env ACCESS_TOKEN_TTL=7200 EXTRA_AUDIENCE=https://downstream.example/api \
                                               node as.js $ASL http://127.0.0.1:$RSL/mcp
lab_start py2-auth-long $RSL   "$LAB/py2-auth" "$V2" server.py $RSL http://127.0.0.1:$ASL --aud-contains
# unbound: the AS replaces aud with a foreign value and the RS checks no audience (3.2.2 and 3.3.1a must fail)
lab_start oidc-as-unbound $ASU "$LAB/oidc"     env FIXED_AUDIENCE=https://other.example/api \
                                               node as.js $ASU http://127.0.0.1:$RSU/mcp
lab_start py2-auth-unbound $RSU "$LAB/py2-auth" "$V2" server.py $RSU http://127.0.0.1:$ASU --no-aud-check
# an AS that ignores the RFC 8707 resource parameter at its token endpoint: the 3.3.1b grant naming another resource
# gets a token for the audited resource, which the RS rightly accepts (3.3.1 and 7.2.1 must not FAIL)
lab_start oidc-as-noresource $ASN "$LAB/oidc"  env IGNORE_RESOURCE=1 node as.js $ASN http://127.0.0.1:$RSN/mcp
lab_start py2-auth-noresource $RSN "$LAB/py2-auth" "$V2" server.py $RSN http://127.0.0.1:$ASN
# an RS on the first AS whose metadata names a resource that does not cover its endpoint
lab_start py2-auth-badprm $RSBAD "$LAB/py2-auth" "$V2" server.py $RSBAD http://127.0.0.1:$AS \
                                               --prm-resource http://127.0.0.1:1/other
# tool sets that change between runs (1.2, 1.3) and notifications with and without their sender (7.2.2); the tests
# write "staged" into the state files and empty them again
: >"$RUN/staged.state"; : >"$RUN/staged-gate.state"
lab_start py2-staged $STG      "$LAB/py2-staged" "$V2" server.py $STG "$RUN/staged.state"
lab_start py2-staged-gate $STGG "$LAB/py2-staged" "$V2" server.py $STGG "$RUN/staged-gate.state" \
                                               --gate --no-sender --stray-token
# files under lab/py2-files/root: canonicalised and confined (5.4.1 PASS), and --naive (5.4.1 and 5.1.2c FAIL)
lab_start py2-files  $FILES    "$LAB/py2-files" "$V2" server.py $FILES
lab_start py2-files-naive $FILESNAIVE "$LAB/py2-files" "$V2" server.py $FILESNAIVE --naive
"$LAB/tls/make-certs.sh" "$RUN/certs" >/dev/null
"$LAB/tls/nginx-conf.sh" "$RUN/certs" "$RUN/nginx" $PY2 $MOD $LEG $EXP $SS $T13 $PLAIN $REDIR $NOSTORE $WRONG
lab_start nginx      $MOD      "$RUN/nginx"    nginx -p "$RUN/nginx" -c nginx.conf
lab_start s_server   $SSRV     "$RUN/certs"    openssl s_server -accept 127.0.0.1:$SSRV -cert server.crt \
          -cert_chain ca.crt -key server.key -min_protocol TLSv1 -cipher 'DEFAULT:@SECLEVEL=0' -www -quiet
for p in $PY2 $PY2SLJ $PY2NODNS $PY1 $FM $FMAUTO $TS2 $TS2REJ $PAGED $AS $RS $MOD $LEG $EXP $SS $T13 $PLAIN $REDIR $SSRV $NOSTORE $SLOPPY $WRONG $ASL $RSL $RSBAD $ASU $RSU $STG $STGG $FILES $FILESNAIVE $ASN $RSN; do
  lab_wait "$p" 60 || { echo "port $p did not come up; see $RUN/*.log" >&2; exit 1; }
done
U=http://127.0.0.1; T=127.0.0.1; printf '%s\n' >"$RUN/env" \
  LAB_PY2=$U:$PY2/mcp LAB_PY2_SL_JSON=$U:$PY2SLJ/mcp LAB_PY2_NODNS=$U:$PY2NODNS/mcp LAB_PY1=$U:$PY1/mcp \
  LAB_FASTMCP=$U:$FM/mcp LAB_FASTMCP_AUTO=$U:$FMAUTO/mcp LAB_TS2=$U:$TS2/mcp LAB_TS2_REJECT=$U:$TS2REJ/mcp \
  LAB_PY2_PAGED=$U:$PAGED/mcp LAB_NOSTORE=$U:$NOSTORE/mcp LAB_PY2_SLOPPY=$U:$SLOPPY/mcp \
  LAB_AS=$U:$AS LAB_RS=$U:$RS/mcp LAB_AS_LONG=$U:$ASL LAB_RS_LONG=$U:$RSL/mcp LAB_RS_BADPRM=$U:$RSBAD/mcp \
  LAB_AS_UNBOUND=$U:$ASU LAB_RS_UNBOUND=$U:$RSU/mcp \
  LAB_AS_NORESOURCE=$U:$ASN LAB_RS_NORESOURCE=$U:$RSN/mcp \
  LAB_PY2_STAGED=$U:$STG/mcp "LAB_PY2_STAGED_STATE=$RUN/staged.state" \
  LAB_PY2_STAGED_GATE=$U:$STGG/mcp "LAB_PY2_STAGED_GATE_STATE=$RUN/staged-gate.state" \
  "LAB_TLS_CA=$RUN/certs/ca.crt" LAB_TLS_MODERN=$T:$MOD LAB_TLS_LEGACY=$T:$LEG \
  LAB_TLS_EXPIRED=$T:$EXP LAB_TLS_SELFSIGNED=$T:$SS LAB_TLS_13ONLY=$T:$T13 LAB_PLAIN_200=$T:$PLAIN \
  LAB_PLAIN_301=$T:$REDIR LAB_SSERVER_LEGACY=$T:$SSRV LAB_TLS_WRONGNAME=$T:$WRONG \
  LAB_PY2_FILES=$U:$FILES/mcp LAB_PY2_FILES_NAIVE=$U:$FILESNAIVE/mcp
# provider matrix (lab/providers/as.py): an AS per identity provider's behaviour toward MCP clients, each with a
# py2-auth RS on it. okta/keycloak refuse DCR as those providers do, entra refuses RFC 8707 `resource` and puts its
# application id in aud (so its RS runs with --audience, as a server registered in Entra does), auth0 gives an opaque
# token without --audience, hydra gives aud [], github has no registration_endpoint.
PROVIDERS="okta keycloak entra auth0 hydra github"; ENTRA_APP_ID=6731de76-14a6-49ae-97bc-6eba6914391e
read -r -a PP <<<"$(free_ports 12)"; i=0
for mode in $PROVIDERS; do
  pa=${PP[i]}; pr=${PP[i+1]}; i=$((i+2)); aud=()
  [ "$mode" != entra ] || aud=(--audience "$ENTRA_APP_ID")
  lab_start provider-$mode-as $pa "$LAB/providers" "$V2" as.py $pa --mode $mode --resource http://127.0.0.1:$pr/mcp
  lab_start provider-$mode-rs $pr "$LAB/py2-auth" "$V2" server.py $pr http://127.0.0.1:$pa ${aud[@]+"${aud[@]}"}
done
for p in "${PP[@]}"; do lab_wait "$p" 60 || { echo "port $p did not come up; see $RUN/*.log" >&2; exit 1; }; done
i=0; for mode in $PROVIDERS; do M=$(tr a-z A-Z <<<"$mode")
  printf '%s\n' >>"$RUN/env" LAB_PROVIDER_${M}_AS=$U:${PP[i]} LAB_PROVIDER_${M}_RS=$U:${PP[i+1]}/mcp; i=$((i+2)); done
cat "$RUN/env"
# Further targets each start from their own script (lab/up.d/*.sh, sourced in name order with lib.sh's
# functions and $RUN): each picks its ports with free_ports, starts with lab_start, waits with lab_wait
# and appends its NAME=value lines to "$RUN/env".
for x in "$LAB"/up.d/*.sh; do [ -e "$x" ] && . "$x"; done
true
