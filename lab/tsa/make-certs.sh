#!/usr/bin/env bash
# A test PKI for a local RFC 3161 time-stamping authority (openssl ts), in DIR:
#   ca.pem / ca.key          the test root CA
#   tsa.pem / tsa.key        the TSA certificate (critical extendedKeyUsage timeStamping,
#                            critical keyUsage digitalSignature), issued by the CA
#   other-ca.pem             an unrelated CA (a wrong trust anchor for tests)
#   tsa.cnf, serial          the openssl ts configuration
# KEY selects the TSA key: rsa (default, PKCS#1 v1.5 signatures), rsa-pss, p256, p384.
# DIGEST selects the signer digest: sha256 (default), sha384, sha512.
# NOT_AFTER, when given, ends the TSA certificate's validity at that UTC time
# (YYYYMMDDHHMMSSZ; it starts now): a TSA whose certificate expires within seconds, for
# the tests of renewals made too late. Without it the certificate is valid 3650 days.
# Usage: lab/tsa/make-certs.sh DIR [KEY] [DIGEST] [NOT_AFTER]
set -euo pipefail
dir=${1:?usage: make-certs.sh DIR [rsa|rsa-pss|p256|p384] [sha256|sha384|sha512] [YYYYMMDDHHMMSSZ]}
key=${2:-rsa}
digest=${3:-sha256}
not_after=${4:-}
mkdir -p "$dir"
cd "$dir"
command -v openssl >/dev/null || { echo "make-certs.sh: openssl is required" >&2; exit 1; }

genkey() {
  case "$1" in
    rsa) openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$2" ;;
    rsa-pss) openssl genpkey -quiet -algorithm RSA-PSS -pkeyopt rsa_keygen_bits:2048 -out "$2" ;;
    p256) openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$2" ;;
    p384) openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$2" ;;
    *) echo "make-certs.sh: unknown key type $1" >&2; exit 2 ;;
  esac
}

for ca in ca other-ca; do
  openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$ca.key"
  openssl req -x509 -new -key "$ca.key" -sha256 -days 3650 -subj "/O=mcp-probe lab/CN=$ca test root" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$ca.pem" 2>/dev/null
done

genkey "$key" tsa.key
openssl req -new -key tsa.key -subj "/O=mcp-probe lab/CN=lab TSA ($key)" -out tsa.csr 2>/dev/null
cat > tsa.ext <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=critical,timeStamping
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
EXT
if [ -z "$not_after" ]; then
  openssl x509 -req -in tsa.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
    -extfile tsa.ext -out tsa.pem 2>/dev/null
else
  # `openssl x509 -req` (3.0) takes a number of days only; `openssl ca` takes an end date.
  case "$not_after" in
    [0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]Z) ;;
    *) echo "make-certs.sh: NOT_AFTER is YYYYMMDDHHMMSSZ (UTC), not $not_after" >&2; exit 2 ;;
  esac
  : > ca-index.txt
  echo 1000 > ca-serial
  cat > ca.cnf <<CNF
[ ca ]
default_ca = lab_ca

[ lab_ca ]
database = ca-index.txt
new_certs_dir = .
serial = ca-serial
default_md = sha256
policy = lab_policy
unique_subject = no

[ lab_policy ]
organizationName = optional
commonName = supplied
CNF
  openssl ca -batch -notext -config ca.cnf -cert ca.pem -keyfile ca.key -in tsa.csr \
    -enddate "$not_after" -extfile tsa.ext -out tsa.pem 2>/dev/null
  rm -f ca-index.txt* ca-serial* ca.cnf 1000.pem
fi
rm -f tsa.csr tsa.ext

echo 01 > serial
cat > tsa.cnf <<CNF
[ tsa ]
default_tsa = lab_tsa

[ lab_tsa ]
dir = $PWD
serial = \$dir/serial
crypto_device = builtin
signer_cert = \$dir/tsa.pem
signer_key = \$dir/tsa.key
signer_digest = $digest
default_policy = 1.3.6.1.4.1.55555.1.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
CNF
echo "$dir"
