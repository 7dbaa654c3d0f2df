"""Run a command and report its peak resident set size from outside.

    maxrss.py REPORT COMMAND ARGS...

Runs COMMAND with this process's stdin, stdout and stderr, waits for it with
os.wait4 and writes `<ru_maxrss KiB> <exit code>` to REPORT (the exit code negative
for a signal). Exits with the command's code (128+N for signal N).
"""

import os
import subprocess
import sys

report, argv = sys.argv[1], sys.argv[2:]
child = subprocess.Popen(argv)
_, status, usage = os.wait4(child.pid, 0)
code = os.waitstatus_to_exitcode(status)
with open(report, "w") as f:
    f.write(f"{usage.ru_maxrss} {code}\n")
sys.exit(code if code >= 0 else 128 - code)
