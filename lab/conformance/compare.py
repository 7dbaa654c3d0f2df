#!/usr/bin/env python3
"""lab/conformance/compare.py EXPECTED RESULTS_ROOT SUMMARY PASS=SCENARIOS_FILE...

Reads the conformance suite's results (RESULTS_ROOT/<pass>/<scenario>-<timestamp>/checks.json)
for each pass, judges every scenario, writes a Markdown summary to SUMMARY and compares with
the expected-failures file. Exit 1 on a new failure or a stale entry, else 0.

A scenario passes when none of its checks has a status other than SUCCESS, INFO or SKIPPED
(a WARNING, a SHOULD the client missed, counts as not passing, as in the suite's own ✗).
A scenario with no checks.json (the client or the runner broke) does not pass.

EXPECTED: one entry a line, `NAME  reason` (two or more spaces or a tab before the reason),
'#' starts a comment. NAME is a scenario (it may fail in any way) or `scenario:check-id`
(only that check may fail; any other failing check of the scenario is a new failure).
MUST_SUCCEED names checks that must also have one SUCCESS instance in their scenario (else
`<check>(never SUCCESS)` fails, and no entry excuses it).
An entry applies in every pass that runs its scenario. It is stale, and fails the run,
when its scenario (or its check) does not fail in any pass that ran it.
"""
import glob
import json
import os
import re
import sys

OK = {"SUCCESS", "INFO", "SKIPPED"}

# Checks that must succeed at least once in a scenario even where an expected-failures entry
# excuses the same check's other instances: the login itself must be right, and only the
# deliberate probes after it may differ (auth/basic-cimd: the login's authorization request
# carries the client ID metadata document URL; the 3.3.5 scratch clients' carry their own).
MUST_SUCCEED = {"auth/basic-cimd": ["cimd-client-id-used"]}
STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")


def load_expected(path):
    entries = {}
    for n, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.split("#", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        parts = re.split(r"\t+| {2,}", line.strip(), maxsplit=1)
        if len(parts) != 2 or not parts[1].strip():
            sys.exit(f"{path}:{n}: want `NAME  reason`, got {raw.rstrip()!r}")
        if parts[0] in entries:
            sys.exit(f"{path}:{n}: {parts[0]} listed twice")
        entries[parts[0]] = parts[1].strip()
    for name in entries:
        if ":" in name and name.split(":", 1)[0] in entries:
            sys.exit(f"{path}: {name} and its scenario are both listed")
    return entries


def results(root):
    """scenario -> list of failing check ids (None: no result)."""
    out = {}
    for f in glob.glob(os.path.join(root, "**", "checks.json"), recursive=True):
        name = STAMP.sub("", os.path.relpath(os.path.dirname(f), root))
        checks = json.load(open(f, encoding="utf-8"))
        bad = sorted({c.get("id", "?") for c in checks if c.get("status") not in OK})
        good = {c.get("id", "?") for c in checks if c.get("status") == "SUCCESS"}
        for must in MUST_SUCCEED.get(name, []):
            if must not in good:
                bad.append(f"{must}(never SUCCESS)")
        out[name] = (sorted(bad), len(checks))
    return out


def main():
    expected_path, root, summary_path, *passes = sys.argv[1:]
    expected = load_expected(expected_path)
    failing = {}  # name -> set of passes where it failed
    ran = {}  # scenario -> set of passes
    new = []
    rows = []
    for p in passes:
        pname, scen_file = p.split("=", 1)
        scenarios = [s.strip() for s in open(scen_file) if s.strip()]
        res = results(os.path.join(root, pname))
        for s in scenarios:
            ran.setdefault(s, set()).add(pname)
            bad, n = res.get(s, (None, 0))
            if bad is None:
                bad = ["(no result: the client or the runner broke)"]
            for c in bad:
                failing.setdefault(f"{s}:{c}", set()).add(pname)
            if bad:
                failing.setdefault(s, set()).add(pname)
            if s in expected:
                verdict = "expected failure" if bad else "PASS (stale entry)"
            else:
                unexcused = [c for c in bad if f"{s}:{c}" not in expected]
                excused = [c for c in bad if f"{s}:{c}" in expected]
                if unexcused:
                    verdict = "NEW FAILURE"
                    new.append(f"{pname}: {s}: {', '.join(unexcused)}")
                elif excused:
                    verdict = "expected failure (checks)"
                else:
                    verdict = "pass"
            rows.append((pname, s, verdict, n, bad))
    stale = []
    for name, reason in expected.items():
        scen = name.split(":", 1)[0]
        if scen not in ran:
            stale.append(f"{name}: no pass runs this scenario (renamed or removed from the suite?)")
        elif not failing.get(name):
            stale.append(f"{name}: passes in {', '.join(sorted(ran[scen]))}; drop the entry ({reason})")
    with open(summary_path, "w", encoding="utf-8") as f:
        f.write("# MCP conformance suite, client scenarios, against mcp-collect\n\n")
        f.write("| pass | scenario | verdict | checks | not passing |\n|---|---|---|---|---|\n")
        for pname, s, verdict, n, bad in rows:
            f.write(f"| {pname} | {s} | {verdict} | {n} | {' '.join(bad)} |\n")
        n_pass = sum(1 for r in rows if r[2] in ("pass", "PASS (stale entry)"))
        n_exp = sum(1 for r in rows if r[2].startswith("expected failure"))
        f.write(f"\n{n_pass} passed, {n_exp} expected failures, {len(new)} new failures, {len(stale)} stale entries\n")
        for x in new:
            f.write(f"\nNEW FAILURE {x}")
        for x in stale:
            f.write(f"\nSTALE {x}")
        f.write("\n")
    for pname, s, verdict, n, bad in rows:
        print(f"{pname:10} {verdict:24} {s}" + (f"  [{' '.join(bad)}]" if bad and verdict != "pass" else ""))
    for x in new:
        print(f"conformance: NEW FAILURE {x}", file=sys.stderr)
    for x in stale:
        print(f"conformance: STALE ENTRY {x}", file=sys.stderr)
    n_pass = sum(1 for r in rows if r[2] in ("pass", "PASS (stale entry)"))
    print(f"conformance: {n_pass} passed, {len(rows) - n_pass} failed ({len(rows) - n_pass - len(new)} expected), "
          f"{len(new)} new, {len(stale)} stale")
    return 1 if new or stale else 0


if __name__ == "__main__":
    sys.exit(main())
