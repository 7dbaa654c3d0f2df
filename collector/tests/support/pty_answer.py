"""Run a command with a terminal (a pseudo-terminal for its stdin, stdout and stderr) and
answer its y/N question.

Usage: python pty_answer.py ANSWER COMMAND ARGS...
Once the output shows `[y/N]`, ANSWER and a newline are typed. Everything the command
printed goes to this script's stdout; the exit code is the command's.
"""
import os
import pty
import sys

answer = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
seen = b""
answered = False
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
    if not answered and b"[y/N]" in seen:
        os.write(fd, answer.encode() + b"\n")
        answered = True
sys.stdout.buffer.write(seen)
sys.stdout.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
