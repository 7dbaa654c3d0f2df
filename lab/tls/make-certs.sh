#!/usr/bin/env bash
# lab/tls/make-certs.sh DIR -- test CA, leaf for 127.0.0.1/localhost, expired leaf, self-signed leaf, wrong-name leaf (OpenSSL 3.0)
set -euo pipefail
D=${1:?usage: make-certs.sh DIR}; mkdir -p "$D" && cd "$D"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=MCP Probe Test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' > leaf.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 825 -extfile leaf.ext 2>/dev/null
cat server.crt ca.crt > server-chain.crt
# wrong-name leaf: same CA, valid dates, SAN only DNS:wrong.example (no IP:127.0.0.1), so a client connecting to
# 127.0.0.1 gets a trusted chain for the wrong name (same key as server.crt)
openssl req -new -key server.key -out wrongname.csr -subj "/CN=wrong.example" 2>/dev/null
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:wrong.example\n' > wrongname.ext
openssl x509 -req -in wrongname.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out wrongname.crt -days 825 -extfile wrongname.ext 2>/dev/null
cat wrongname.crt ca.crt > wrongname-chain.crt   # next: self-signed leaf (not from the CA)
openssl req -x509 -newkey rsa:2048 -nodes -keyout selfsigned.key -out selfsigned.crt -days 30 -subj "/CN=localhost" \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null
# expired leaf: OpenSSL 3.0's `x509` has no -not_before/-not_after, so use `openssl ca` with explicit dates
mkdir -p cadb && : > cadb/index.txt && echo 1000 > cadb/serial
cat > ca.cnf <<'CNF'
[ ca ]
default_ca = test_ca
[ test_ca ]
dir = ./cadb
database = $dir/index.txt
new_certs_dir = $dir
serial = $dir/serial
default_md = sha256
policy = pol
copy_extensions = none
[ pol ]
commonName = supplied
[ leaf ]
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost
CNF
openssl ca -batch -config ca.cnf -cert ca.crt -keyfile ca.key -in server.csr -out expired.crt -extensions leaf \
  -startdate 20200101000000Z -enddate 20200201000000Z -notext 2>/dev/null
openssl verify -CAfile ca.crt server.crt
openssl verify -CAfile ca.crt wrongname.crt
echo "expired.crt: $( (openssl verify -CAfile ca.crt expired.crt 2>&1 || true) | grep -o "certificate has expired" | head -1)"
