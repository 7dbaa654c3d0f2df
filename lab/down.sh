#!/usr/bin/env bash
# lab/down.sh -- stop what lab/up.sh started, by PID only
. "$(dirname "$0")/lib.sh"; lab_stop_all
