# lab/up.d/net.sh -- sourced by lab/up.sh (lib.sh functions, $LAB, $RUN, $PY2 set).
# Connectivity targets: two tinyproxy instances on loopback (one that allows CONNECT to any port and logs every
# request, one that refuses every client with 403), and an nginx TLS front for py2 that requires a client
# certificate from its own client CA (ssl_verify_client on). Makes the client CA, a client certificate and key.
read -r NET_PROXY NET_PROXY_DENY NET_MTLS <<<"$(free_ports 3)"
NC="$RUN/net"; mkdir -p "$NC/certs" "$NC/nginx/logs" "$NC/proxy" "$NC/proxy-deny"
( cd "$NC/certs"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout client-ca.key -out client-ca.crt -days 3650 \
    -subj "/CN=MCP Probe Test Client CA" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=mcp-probe lab client/O=MCP Probe Lab" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >client.ext
  openssl x509 -req -in client.csr -CA client-ca.crt -CAkey client-ca.key -CAcreateserial -out client.crt \
    -days 825 -extfile client.ext 2>/dev/null
  openssl verify -CAfile client-ca.crt client.crt >/dev/null )
net_tinyproxy() { # DIR PORT EXTRA-CONFIG: no ConnectPort line, so CONNECT is allowed to any port
  cat >"$1/tinyproxy.conf" <<CONF
Port $2
Listen 127.0.0.1
Timeout 60
LogFile "$1/tinyproxy.log"
LogLevel Info
MaxClients 64
$3
CONF
  : >"$1/tinyproxy.log"; }
net_tinyproxy "$NC/proxy" $NET_PROXY "Allow 127.0.0.1"
net_tinyproxy "$NC/proxy-deny" $NET_PROXY_DENY "Allow 192.0.2.1"   # no loopback client is allowed: 403
lab_start tinyproxy      $NET_PROXY      "$NC/proxy"      tinyproxy -d -c "$NC/proxy/tinyproxy.conf"
lab_start tinyproxy-deny $NET_PROXY_DENY "$NC/proxy-deny" tinyproxy -d -c "$NC/proxy-deny/tinyproxy.conf"
C=$RUN/certs; N=$NC/nginx
cat >"$N/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $N/nginx.pid;
error_log $N/logs/error.log warn;
events { worker_connections 64; }
http {
  access_log $N/logs/access.log;
  client_body_temp_path $N/tmp_body; proxy_temp_path $N/tmp_proxy; fastcgi_temp_path $N/tmp_fcgi;
  uwsgi_temp_path $N/tmp_uwsgi; scgi_temp_path $N/tmp_scgi;
  proxy_http_version 1.1; proxy_buffering off; proxy_read_timeout 1h;
  proxy_set_header Connection ""; proxy_set_header Host \$http_host;
  # mutual TLS: the server chain from the lab's test CA; clients must present a certificate of the client CA
  server { listen 127.0.0.1:$NET_MTLS ssl; ssl_certificate $C/server-chain.crt; ssl_certificate_key $C/server.key;
    ssl_protocols TLSv1.2 TLSv1.3; ssl_client_certificate $NC/certs/client-ca.crt; ssl_verify_client on;
    location / { proxy_pass http://127.0.0.1:$PY2; } }
}
CONF
lab_start nginx-mtls $NET_MTLS "$N" nginx -p "$N" -c nginx.conf
for p in $NET_PROXY $NET_PROXY_DENY $NET_MTLS; do
  lab_wait "$p" 30 || { echo "port $p did not come up; see $RUN/*.log" >&2; exit 1; }
done
printf '%s\n' >>"$RUN/env" LAB_PROXY=http://127.0.0.1:$NET_PROXY "LAB_PROXY_LOG=$NC/proxy/tinyproxy.log" \
  LAB_PROXY_DENY=http://127.0.0.1:$NET_PROXY_DENY LAB_MTLS=127.0.0.1:$NET_MTLS \
  "LAB_MTLS_CLIENT_CERT=$NC/certs/client.crt" "LAB_MTLS_CLIENT_KEY=$NC/certs/client.key" \
  "LAB_MTLS_CLIENT_CA=$NC/certs/client-ca.crt" "LAB_MTLS_CA=$C/ca.crt"   # the server chain's CA
tail -n 8 "$RUN/env"
