#!/usr/bin/env bash
# lab/tls/tlscheck.sh HOST:PORT CAFILE -- which TLS versions does the server accept? (SECLEVEL=0 so 1.0/1.1 can be offered)
T=$1; CA=$2
for v in tls1 tls1_1 tls1_2 tls1_3; do
  out=$(echo | timeout 5 openssl s_client -connect "$T" -$v -cipher 'DEFAULT:@SECLEVEL=0' -CAfile "$CA" 2>&1)
  if echo "$out" | grep -q 'Cipher is (NONE)'; then
    why=$(echo "$out" | grep -oE 'alert [a-z ]+|unexpected eof|no protocols available|wrong version number' | head -1)
    echo "$v: REFUSED (${why:-handshake failed})"
  else
    echo "$v: ACCEPTED ($(echo "$out" | grep -oE 'Cipher is [A-Z0-9_-]+' | head -1); $(echo "$out" | grep -oE 'Verify return code: [0-9]+ \([^)]*\)' | tail -1))"
  fi
done
