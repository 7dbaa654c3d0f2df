# lab/up.d/sse.sh -- servers that speak only the legacy HTTP+SSE transport (2024-11-05): GET /sse opens the
# stream, its `endpoint` event names /messages/?session_id=..., answers arrive as `message` events.
# LAB_PY1_SSE / LAB_FASTMCP_SSE: the stream URLs; LAB_PY1_SSE_ORIGIN: the bare origin (domain-style detection).
read -r SSEPY1 SSEFM <<<"$(free_ports 2)"
lab_start py1-sse     $SSEPY1 "$LAB/py1-sse" "$LAB/.venv-mcp1/bin/python" server.py $SSEPY1
lab_start fastmcp-sse $SSEFM  "$LAB/fastmcp" "$LAB/.venv-fastmcp/bin/fastmcp" run server.py -t sse \
                                             --host 127.0.0.1 -p $SSEFM --no-banner
for p in $SSEPY1 $SSEFM; do
  lab_wait "$p" 60 || { echo "port $p did not come up; see $RUN/*.log" >&2; exit 1; }
done
printf '%s\n' >>"$RUN/env" \
  LAB_PY1_SSE=http://127.0.0.1:$SSEPY1/sse LAB_PY1_SSE_ORIGIN=http://127.0.0.1:$SSEPY1 \
  LAB_FASTMCP_SSE=http://127.0.0.1:$SSEFM/sse
