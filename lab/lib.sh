# lab/lib.sh -- source it. free_ports N | lab_start NAME PORT DIR CMD... | lab_wait PORT [SECS] | lab_stop_all
# LAB_RUN overrides the run folder (pids, env, logs, certs, nginx prefix); default lab/run.
LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${LAB_RUN:-$LAB/run}; mkdir -p "$RUN"; RUN=$(cd "$RUN" && pwd)
free_ports() { # N distinct free loopback ports (all sockets held until all are picked)
  python3 -c 'import socket,sys; s=[socket.socket() for _ in range(int(sys.argv[1]))]
[x.bind(("127.0.0.1",0)) for x in s]; print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"; }
lab_start() { # cd first, then background the command itself so $! is the server's own PID (nohup execs it)
  local name=$1 port=$2 dir=$3; shift 3
  ( cd "$dir" || exit 1; nohup "$@" >"$RUN/$name.log" 2>&1 & echo "$! $name $port" >>"$RUN/pids" ); }
lab_wait() { # poll a TCP connect until the port answers
  local n=$(( ${2:-30} * 5 ))
  until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do n=$((n-1)); [ $n -gt 0 ] || return 1; sleep 0.2; done; }
lab_alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$s" ] && [ "${s#Z}" = "$s" ]; }  # zombie = gone
lab_stop_all() { # SIGTERM by PID, wait up to 5 s, then SIGKILL what is left
  [ -f "$RUN/pids" ] || return 0
  local pid name port i left
  while read -r pid name port; do kill "$pid" 2>/dev/null; done <"$RUN/pids"
  for i in $(seq 10); do left=0
    while read -r pid name port; do lab_alive "$pid" && left=1; done <"$RUN/pids"
    [ $left = 0 ] && break; sleep 0.5; done
  while read -r pid name port; do lab_alive "$pid" && kill -9 "$pid" && echo "killed -9 $name"; done <"$RUN/pids"
  rm -f "$RUN/pids"; }
