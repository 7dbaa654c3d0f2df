#!/usr/bin/env bash
# What two kinds of change cost, shown by making them: in a scratch worktree of HEAD it
#   1. adds a check graded by an existing rule with another parameter value (a copy of the
#      embedded definition with one more row), and grades the examples with it;
#   2. adds a new rule (its file, its `pub mod` line, its entry in RULES, a definition row,
#      its section in docs/checks.md), builds mcp-grade, and grades the examples with it;
# and prints the files each change touched (git diff --stat). Fails when a change touches
# more files than docs/benchmarks.md says, or when the new row is not graded.
#
# Usage: scripts/change-cost.sh            (needs git and cargo; builds in target/change-cost)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/change-cost.XXXXXX")
cleanup() {
  git -C "$root" worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT

git -C "$root" worktree add --quiet --detach "$scratch/tree" HEAD
tree=$scratch/tree
def=evaluator/benchmarks/cis-mcp-server-1.0.0.toml
export CARGO_TARGET_DIR=$root/target/change-cost
examples=("$root"/examples/*.mcpev)

count() { git -C "$tree" status --porcelain | wc -l | tr -d ' '; }

expect_at_most() { # what limit actual
  if [ "$3" -gt "$2" ]; then
    echo "change-cost: $1 touched $3 files, more than the $2 docs/benchmarks.md states" >&2
    git -C "$tree" status --porcelain >&2
    exit 1
  fi
}

echo "== building mcp-grade from HEAD (target/change-cost)"
(cd "$tree" && cargo build --quiet -p mcp-probe-evaluator --bin mcp-grade)
grade="$CARGO_TARGET_DIR/debug/mcp-grade"

# 1. A check an existing rule grades, with another parameter: one row.
mine=evaluator/benchmarks/example-tailored.toml
sed -e 's/^id = "cis-mcp-server-1.0.0"/id = "example-one-more-row"/' "$tree/$def" >"$tree/$mine"
cat >>"$tree/$mine" <<'EOF'

[[check]]
number = "1.5"
title = "only the newest protocol revisions served (example row)"
level = 2
status = "automated"
source = "wire"
rule = "revisions-pinned"
transports = ["streamable-http", "http+sse"]
eras = "negotiated"
remediation = "serve only the newest protocol revisions"
params = { revision_floor = "2025-11-25" }
EOF
n=$(count)
echo "== a check graded by an existing rule: $n file(s)"
git -C "$tree" status --porcelain
expect_at_most "a check graded by an existing rule" 1 "$n"
"$grade" --benchmark "$tree/$mine" --format json "${examples[@]}" >"$scratch/one-row.json" || true
python3 - "$scratch/one-row.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rows = [c for c in r["checks"] if c["id"] == "1.5"]
assert rows, "the new row 1.5 is not in the report"
verdicts = [s["verdict"] for s in rows[0]["results"]]
assert verdicts and all(v in ("PASS", "FAIL", "UNKNOWN", "ERROR", "N/A", "NO-REV") for v in verdicts), verdicts
print(f"   graded: 1.5 on {len(verdicts)} bundles: " + ", ".join(sorted(set(verdicts))))
EOF
git -C "$tree" checkout --quiet -- . && rm -f "$tree/$mine"

# 2. A new rule: its file, its mod line, its RULES entry, its row, its docs section.
cat >"$tree/evaluator/src/checks/configuration/server_named.rs" <<'EOF'
//! Rule `server-named` (an example rule made by scripts/change-cost.sh): the server
//! names itself in `serverInfo.name`.

use mcp_probe_schema::model::Era;

use crate::check::{Check, Context, Legs};
use crate::evidence::Bundle;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};

/// The server names itself.
#[derive(Debug)]
pub struct ServerNamed;

impl Check for ServerNamed {
    fn id(&self) -> &'static str {
        "server-named"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::NONE
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        let name = ev
            .session()
            .and_then(|s| s.server_info.as_ref())
            .and_then(|i| i.get("name"))
            .and_then(|n| n.as_str())
            .unwrap_or("");
        let leg = if name.trim().is_empty() {
            SubVerdict::new("a", SubOutcome::Fail, "serverInfo names no server")
        } else {
            SubVerdict::new("a", SubOutcome::Pass, "serverInfo names the server")
        };
        Outcome::from_subs(vec![leg], "what the name means is not checked")
    }
}
EOF
sed -i 's/^pub mod capabilities_match_baseline;/pub mod capabilities_match_baseline;\npub mod server_named;/' \
  "$tree/evaluator/src/checks/configuration.rs"
sed -i 's/^pub static RULES: &\[&dyn Check\] = &\[/&\n    \&checks::configuration::server_named::ServerNamed,/' \
  "$tree/evaluator/src/rules.rs"
cat >>"$tree/$def" <<'EOF'

[[check]]
number = "1.6"
title = "the server names itself (example row)"
level = 2
status = "automated"
source = "wire"
rule = "server-named"
transports = ["streamable-http", "http+sse", "stdio"]
eras = "negotiated"
remediation = "name the server in serverInfo"
EOF
printf '\n### 1.6: the server names itself (example)\n\nAn example rule: PASS when `serverInfo.name` is not blank.\n' >>"$tree/docs/checks.md"
n=$(count)
echo "== a new rule: $n file(s)"
git -C "$tree" status --porcelain
expect_at_most "a new rule" 5 "$n"
(cd "$tree" && cargo build --quiet -p mcp-probe-evaluator --bin mcp-grade)
"$grade" --format json "${examples[@]}" >"$scratch/new-rule.json" || true
python3 - "$scratch/new-rule.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rows = [c for c in r["checks"] if c["id"] == "1.6"]
assert rows, "the new rule's row 1.6 is not in the report"
verdicts = [s["verdict"] for s in rows[0]["results"]]
assert "PASS" in verdicts, verdicts
legs = {l for s in rows[0]["results"] for l in s.get("legs", {})}
assert legs <= {"1.6a"}, legs
print(f"   graded: 1.6 on {len(verdicts)} bundles: " + ", ".join(sorted(set(verdicts))) + "; sub-verdict " + ", ".join(sorted(legs)))
EOF
echo "change-cost: ok"
