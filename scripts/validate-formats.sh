#!/usr/bin/env bash
# scripts/validate-formats.sh -- grade BUNDLES... (default: examples/*.mcpev, trusting
# examples/collector.pub and the examples' TSA root examples/tsa/ca.pem) as OSCAL and
# XCCDF with target/debug/mcp-grade and validate the XCCDF document against the vendored XCCDF 1.2 XSD with xmllint (libxml2-utils,
# installed by lab/install.sh). The OSCAL document is validated against the vendored
# NIST schema by evaluator/tests/assessor_formats.rs; here it is checked to parse and to
# name the vendored OSCAL version. Both are graded twice and must be byte-identical.
# Usage: scripts/validate-formats.sh [--trust KEY BUNDLE...]
set -euo pipefail
cd "$(dirname "$0")/.."
grade=${MCP_GRADE:-target/debug/mcp-grade}
if [ $# -gt 0 ]; then args=("$@"); else args=(--trust examples/collector.pub --tsa-cert examples/tsa/ca.pem examples/*.mcpev); fi
command -v xmllint >/dev/null || { echo "validate-formats: xmllint missing (apt-get install libxml2-utils)"; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run() {
  local rc=0
  "$grade" -q "$@" || rc=$?
  case $rc in 0|1|4) ;; *) echo "validate-formats: mcp-grade exited $rc: $*" >&2; exit 1 ;; esac
}
for f in oscal xccdf; do
  run --format "$f" -o "$work/a.$f" "${args[@]}"
  run --format "$f" -o "$work/b.$f" "${args[@]}"
  cmp -s "$work/a.$f" "$work/b.$f" || { echo "validate-formats: two $f reports of the same bundles differ"; exit 1; }
done
xmllint --noout --nonet --schema docs/schemas/vendor/xccdf-1.2/xccdf/1.2/xccdf_1.2.xsd "$work/a.xccdf"
python3 - "$work/a.oscal" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["assessment-results"]
assert d["metadata"]["oscal-version"] == "1.1.2", d["metadata"]
r = d["results"]
assert len(r) == 1 and r[0]["observations"], "one result with observations"
for f in r[0].get("findings", []):
    assert f["target"]["status"]["state"] in ("satisfied", "not-satisfied"), f
print(f"{sys.argv[1]}: OSCAL {d['metadata']['oscal-version']}, {len(r[0]['observations'])} observations, {len(r[0].get('findings', []))} findings")
PY
echo "validate-formats: OSCAL and XCCDF reports are deterministic; XCCDF validates against XCCDF 1.2"
