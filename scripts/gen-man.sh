#!/bin/sh
# Regenerate docs/man/*.1 and docs/completions/* from the clap definitions of mcp-collect
# and mcp-grade. The docs_help tests fail when the committed files are out of date.
set -eu
cd "$(dirname "$0")/.."
MCP_PROBE_REGEN=1 cargo test -q -p mcp-probe-collector --test docs_help man_page_and_completions_are_up_to_date
MCP_PROBE_REGEN=1 cargo test -q -p mcp-probe-evaluator --test docs_help man_pages_and_completions_are_up_to_date
