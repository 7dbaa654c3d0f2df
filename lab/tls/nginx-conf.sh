#!/usr/bin/env bash
# lab/tls/nginx-conf.sh CERTDIR PREFIX UPSTREAM MODERN LEGACY EXPIRED SELFSIGNED TLS13 PLAIN REDIRECT NOSTORE WRONGNAME
# Writes PREFIX/nginx.conf: TLS front-ends and two plaintext doors for the MCP server on 127.0.0.1:UPSTREAM.
set -euo pipefail
C=$(cd "$1" && pwd); mkdir -p "$2/logs"; P=$(cd "$2" && pwd); U=$3
MOD=$4 LEG=$5 EXP=$6 SS=$7 T13=$8 PLAIN=$9 REDIR=${10} NOSTORE=${11} WRONG=${12}
cat >"$P/nginx.conf" <<CONF
daemon off;
master_process off;                 # one process: a SIGKILL from a test harness leaves no orphaned worker
worker_processes 1;
pid $P/nginx.pid;
error_log $P/logs/error.log warn;
events { worker_connections 256; }
http {
  access_log $P/logs/access.log;
  client_body_temp_path $P/tmp_body; proxy_temp_path $P/tmp_proxy; fastcgi_temp_path $P/tmp_fcgi;
  uwsgi_temp_path $P/tmp_uwsgi; scgi_temp_path $P/tmp_scgi;
  client_max_body_size 16m; client_body_buffer_size 16m;   # keep bodies in memory: workers run as nobody
  upstream mcp { server 127.0.0.1:$U; }
  proxy_http_version 1.1;
  proxy_buffering off;                    # SSE must stream
  proxy_read_timeout 1h;
  proxy_set_header Connection "";
  proxy_set_header Host \$http_host;      # py2 then sees 127.0.0.1:<front port>, which its 127.0.0.1:* list allows
  # modern: TLS 1.2 + 1.3, chain from the test CA
  server { listen 127.0.0.1:$MOD ssl; ssl_certificate $C/server-chain.crt; ssl_certificate_key $C/server.key;
    ssl_protocols TLSv1.2 TLSv1.3; location / { proxy_pass http://mcp; } }
  # legacy: also accepts TLS 1.0 and 1.1 (OpenSSL 3 needs SECLEVEL=0 for that)
  server { listen 127.0.0.1:$LEG ssl; ssl_certificate $C/server-chain.crt; ssl_certificate_key $C/server.key;
    ssl_protocols TLSv1 TLSv1.1 TLSv1.2; ssl_ciphers "DEFAULT:@SECLEVEL=0"; location / { proxy_pass http://mcp; } }
  # expired leaf
  server { listen 127.0.0.1:$EXP ssl; ssl_certificate $C/expired.crt; ssl_certificate_key $C/server.key;
    location / { proxy_pass http://mcp; } }
  # self-signed leaf (not from the test CA)
  server { listen 127.0.0.1:$SS ssl; ssl_certificate $C/selfsigned.crt; ssl_certificate_key $C/selfsigned.key;
    location / { proxy_pass http://mcp; } }
  # wrong name: trusted chain from the test CA, valid dates, SAN only DNS:wrong.example (not 127.0.0.1); TLS 1.2 + 1.3
  server { listen 127.0.0.1:$WRONG ssl; ssl_certificate $C/wrongname-chain.crt; ssl_certificate_key $C/server.key;
    ssl_protocols TLSv1.2 TLSv1.3; location / { proxy_pass http://mcp; } }
  # TLS 1.3 only
  server { listen 127.0.0.1:$T13 ssl; ssl_certificate $C/server-chain.crt; ssl_certificate_key $C/server.key;
    ssl_protocols TLSv1.3; location / { proxy_pass http://mcp; } }
  # plaintext door that serves: 200 on / and MCP on /mcp
  server { listen 127.0.0.1:$PLAIN; location = / { default_type text/plain; return 200 "plain HTTP\\n"; }
    location / { proxy_pass http://mcp; } }
  # plaintext door that redirects to the modern TLS port
  server { listen 127.0.0.1:$REDIR; location / { return 301 https://127.0.0.1:$MOD\$request_uri; } }
  # plaintext front that marks every response Cache-Control: no-store (a server that must pass 10.1b)
  server { listen 127.0.0.1:$NOSTORE; location / { proxy_pass http://mcp; proxy_hide_header Cache-Control;
    add_header Cache-Control "no-store" always; } }
}
CONF
