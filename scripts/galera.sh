#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on loopback, for the cluster test suite and the benchmark.
#
#   scripts/galera.sh start        boot node 1 as a new cluster, join nodes 2 and 3 (SST by rsync),
#                                  return once wsrep_cluster_size is 3 and every node is Synced
#   scripts/galera.sh stop         stop the nodes this script started (by their PIDs) and remove
#                                  their temporary datadirs
#   scripts/galera.sh status       each node's PID, state and cluster size; exit 1 unless all 3 are Synced
#   scripts/galera.sh kill N       SIGKILL node N (a crash)
#   scripts/galera.sh restart N    start node N again on its datadir: it recovers its position and
#                                  rejoins by IST (or SST when the position is lost); waits until Synced
#   scripts/galera.sh urls         the nodes' MySQL URLs, one per line (mysql://root@127.0.0.1:PORT)
#   scripts/galera.sh pids         the nodes' mariadbd PIDs, one per line (for the benchmark's CPU figures)
#
# With GALERA_NETNS ("NS1 NS2 NS3"), node N runs in network namespace NSN, made by the caller
# (server/test/cluster/galera-partition.test.ts); GALERA_ADDRESSES ("A1 A2 A3") are the addresses the
# nodes reach each other on, GALERA_HOSTS ("H1 H2 H3") those this host reaches their SQL ports on;
# each node listens on every address of its namespace.
#
# Node N (1–3) listens on 127.0.0.1: SQL port GALERA_PORT+N-1 (3307–3309), group port
# GALERA_GROUP_PORT+N-1 (4567–4569), IST port GALERA_IST_PORT+N-1 (4577–4579) and rsync SST port
# GALERA_SST_PORT+N-1 (4587–4589). Every mariadbd runs with --no-defaults --user=mysql on a datadir
# owned by mysql (rsync SST fails with "Permission denied" when the server runs as root). The state
# of a running cluster is in GALERA_STATE (default ${TMPDIR:-/tmp}/orbit-galera-GALERA_PORT.state):
# the path of its temporary directory. Only PIDs this script recorded are ever signalled; the
# system MariaDB on 3306 is never touched. Every wait is bounded and fails with the node's log tail.
set -euo pipefail

PROVIDER=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
PORT=${GALERA_PORT:-3307}
GROUP_PORT=${GALERA_GROUP_PORT:-4567}
IST_PORT=${GALERA_IST_PORT:-4577}
SST_PORT=${GALERA_SST_PORT:-4587}
STATE=${GALERA_STATE:-${TMPDIR:-/tmp}/orbit-galera-$PORT.state}
NODES=(1 2 3)
read -r -a NETNS <<<"${GALERA_NETNS:-}"
read -r -a ADDRESSES <<<"${GALERA_ADDRESSES:-127.0.0.1 127.0.0.1 127.0.0.1}"
read -r -a HOSTS <<<"${GALERA_HOSTS:-127.0.0.1 127.0.0.1 127.0.0.1}"
BOOT_TIMEOUT=${GALERA_BOOT_TIMEOUT:-120}
# Durable commits on every node, as on the single MariaDB the benchmark compares with; 2 trades a
# crash of the machine (not of the process) for speed.
FLUSH=${GALERA_FLUSH_LOG_AT_TRX_COMMIT:-1}

die() {
  echo "galera.sh: $*" >&2
  exit 1
}

sql_port() { echo $((PORT + $1 - 1)); }
group_port() { echo $((GROUP_PORT + $1 - 1)); }
address() { echo "${ADDRESSES[$1 - 1]}"; }
sql_host() { echo "${HOSTS[$1 - 1]}"; }

root_dir() {
  [[ -f $STATE ]] || die "no cluster recorded in $STATE (run: scripts/galera.sh start)"
  cat "$STATE"
}

# The PID of node N if it is alive and is the mariadbd this script started on that datadir.
node_pid() {
  local dir=$1/node$2 pid
  [[ -f $dir/pid ]] || return 1
  pid=$(cat "$dir/pid")
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "--datadir=$dir/data" || return 1
  echo "$pid"
}

query() { # node sql
  if ((${#NETNS[@]} > 0)); then
    ip netns exec "${NETNS[$1 - 1]}" mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$(sql_port "$1")" -u root -N -B -e "$2" 2>/dev/null
  else
    mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$(sql_port "$1")" -u root -N -B -e "$2" 2>/dev/null
  fi
}

wsrep_status() { # node name
  query "$1" "SHOW GLOBAL STATUS LIKE '$2'" | cut -f2
}

log_tail() {
  echo "--- last lines of $1 ---" >&2
  tail -n 25 "$1" >&2 || true
}

port_free() {
  ! ss -Hltn "sport = :$1" | grep -q .
}

# Starts mariadbd for node N in the background; extra arguments go to mariadbd.
launch() {
  local root=$1 n=$2
  shift 2
  local dir=$root/node$n peers="" i me bind=127.0.0.1 wrap=()
  for i in "${NODES[@]}"; do peers+="${peers:+,}$(address "$i"):$(group_port "$i")"; done
  me=$(address "$n")
  if ((${#NETNS[@]} > 0)); then
    bind=0.0.0.0
    wrap=(ip netns exec "${NETNS[n - 1]}")
  fi
  setsid "${wrap[@]}" mariadbd --no-defaults --user=mysql \
    --datadir="$dir/data" --tmpdir="$dir/tmp" --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
    --bind-address="$bind" --port="$(sql_port "$n")" --skip-name-resolve \
    --max-connections=300 --innodb-buffer-pool-size=128M --innodb-flush-log-at-trx-commit="$FLUSH" \
    --binlog-format=ROW --default-storage-engine=InnoDB --innodb-autoinc-lock-mode=2 \
    --wsrep-on=ON --wsrep-provider="$PROVIDER" --wsrep-cluster-name=orbit-test --wsrep-node-name="node$n" \
    --wsrep-cluster-address="gcomm://$peers" --wsrep-node-address="$me:$(group_port "$n")" \
    --wsrep-provider-options="gmcast.listen_addr=tcp://$me:$(group_port "$n");ist.recv_addr=$me:$((IST_PORT + n - 1));gcache.size=256M" \
    --wsrep-sst-method=rsync --wsrep-sst-receive-address="$me:$((SST_PORT + n - 1))" \
    --wsrep-slave-threads=2 \
    "$@" </dev/null >>"$dir/stdout.log" 2>&1 &
  echo $! >"$dir/pid"
  # Until the background shell has exec'd mariadbd, the PID's command line is this script's.
  local deadline=$((SECONDS + 10))
  until node_pid "$root" "$n" >/dev/null; do
    ((SECONDS < deadline)) || die "node $n did not start (see $dir/stdout.log)"
    sleep 0.05
  done
}

# Waits until node N answers, is Synced and sees a cluster of `size` nodes.
wait_synced() {
  local root=$1 n=$2 size=$3 deadline=$((SECONDS + BOOT_TIMEOUT)) state="" members=""
  while ((SECONDS < deadline)); do
    if ! node_pid "$root" "$n" >/dev/null; then
      log_tail "$root/node$n/error.log"
      die "node $n exited while starting"
    fi
    state=$(wsrep_status "$n" wsrep_local_state_comment || true)
    members=$(wsrep_status "$n" wsrep_cluster_size || true)
    if [[ $state == Synced && $members == "$size" ]]; then return 0; fi
    sleep 0.5
  done
  log_tail "$root/node$n/error.log"
  die "node $n not Synced in a cluster of $size within ${BOOT_TIMEOUT}s (state '${state:-no answer}', size '${members:-?}')"
}

cmd_start() {
  if [[ -f $STATE ]]; then die "a cluster is already recorded in $STATE ($(cat "$STATE")); run: scripts/galera.sh stop"; fi
  [[ -e $PROVIDER ]] || die "the Galera provider $PROVIDER is not installed"
  local n p
  for n in "${NODES[@]}"; do
    for p in "$(sql_port "$n")" "$(group_port "$n")" $((IST_PORT + n - 1)) $((SST_PORT + n - 1)); do
      port_free "$p" || die "port $p is in use (another cluster? try: scripts/galera.sh status)"
    done
  done
  local root
  root=$(mktemp -d "${TMPDIR:-/tmp}/orbit-galera.XXXXXX")
  echo "$root" >"$STATE"
  for n in "${NODES[@]}"; do
    mkdir -p "$root/node$n/data" "$root/node$n/tmp"
  done
  chown -R mysql:mysql "$root"
  chmod 755 "$root"
  local installs=()
  for n in "${NODES[@]}"; do
    # A tmpdir each: bootstraps sharing /tmp at once can trip over each other's temporary tables.
    mariadb-install-db --no-defaults --user=mysql --datadir="$root/node$n/data" --tmpdir="$root/node$n/tmp" \
      --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve >"$root/node$n/install.log" 2>&1 &
    installs+=($!)
  done
  for n in "${NODES[@]}"; do
    wait "${installs[n - 1]}" || {
      log_tail "$root/node$n/install.log"
      die "mariadb-install-db failed for node $n"
    }
  done
  launch "$root" 1 --wsrep-new-cluster
  wait_synced "$root" 1 1
  # In namespaces the host, the proxy and Orbit connect from the namespaces' link addresses, not
  # from loopback: root may log in from any address (joiners get the grant with their copy).
  if ((${#NETNS[@]} > 0)); then
    query 1 "CREATE USER IF NOT EXISTS 'root'@'%'; GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION" ||
      die "could not let root in from the namespaces' links"
  fi
  launch "$root" 2
  wait_synced "$root" 2 2
  launch "$root" 3
  wait_synced "$root" 3 3
  for n in "${NODES[@]}"; do wait_synced "$root" "$n" 3; done
  echo "galera: 3 nodes Synced on ports $(sql_port 1)-$(sql_port 3) ($root)"
}

# SIGTERM, then SIGKILL after a bounded wait, of the recorded PID of node N.
stop_node() {
  local root=$1 n=$2 pid deadline
  pid=$(node_pid "$root" "$n") || return 0
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "galera: node $n did not stop within 30 s; SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
}

cmd_stop() {
  [[ -f $STATE ]] || {
    echo "galera: no cluster recorded in $STATE"
    return 0
  }
  local root n
  root=$(cat "$STATE")
  # The last nodes first, so node 1 does not keep waiting for a quorum it lost.
  for n in 3 2 1; do stop_node "$root" "$n"; done
  case $root in "${TMPDIR:-/tmp}"/orbit-galera.*) rm -rf "$root" ;; *) die "refusing to remove unexpected directory $root" ;; esac
  rm -f "$STATE"
  echo "galera: stopped"
}

cmd_status() {
  local root n pid ok=0
  root=$(root_dir)
  for n in "${NODES[@]}"; do
    if pid=$(node_pid "$root" "$n"); then
      local state size
      state=$(wsrep_status "$n" wsrep_local_state_comment || true)
      size=$(wsrep_status "$n" wsrep_cluster_size || true)
      echo "node $n: pid $pid, port $(sql_port "$n"), state ${state:-no answer}, cluster size ${size:-?}"
      [[ $state == Synced && $size == 3 ]] && ok=$((ok + 1))
    else
      echo "node $n: not running (port $(sql_port "$n"))"
    fi
  done
  ((ok == 3))
}

node_arg() {
  [[ ${1:-} =~ ^[123]$ ]] || die "name a node: 1, 2 or 3"
}

cmd_kill() {
  node_arg "${1:-}"
  local root pid
  root=$(root_dir)
  pid=$(node_pid "$root" "$1") || die "node $1 is not running"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  echo "galera: node $1 (pid $pid) killed"
}

cmd_restart() {
  node_arg "${1:-}"
  local root n=$1 dir position
  root=$(root_dir)
  dir=$root/node$n
  if node_pid "$root" "$n" >/dev/null; then die "node $n is still running"; fi
  # After a crash grastate.dat holds no position; InnoDB knows it. With it the node asks for IST,
  # without it for a full SST.
  rm -f "$dir/recover.log"
  timeout 60 mariadbd --no-defaults --user=mysql --datadir="$dir/data" --tmpdir="$dir/tmp" --socket="$dir/recover.sock" --pid-file="$dir/recover.pid" \
    --log-error="$dir/recover.log" --skip-networking --innodb-buffer-pool-size=64M --binlog-format=ROW \
    --wsrep-on=ON --wsrep-provider="$PROVIDER" --wsrep-cluster-address="gcomm://127.0.0.1:$(group_port 1)" --wsrep-recover \
    >"$dir/recover.out" 2>&1 || true
  position=$(grep -o 'Recovered position: [0-9a-f-]*:-\?[0-9]*' "$dir/recover.log" 2>/dev/null | tail -n 1 | cut -d' ' -f3 || true)
  if [[ -n $position && $position != *:-1 ]]; then
    launch "$root" "$n" --wsrep-start-position="$position"
  else
    launch "$root" "$n"
  fi
  wait_synced "$root" "$n" 3
  echo "galera: node $n rejoined${position:+ from $position}"
}

cmd_pids() {
  local root n
  root=$(root_dir)
  for n in "${NODES[@]}"; do node_pid "$root" "$n" || die "node $n is not running"; done
}

cmd_urls() {
  local n
  for n in "${NODES[@]}"; do echo "mysql://root@$(sql_host "$n"):$(sql_port "$n")"; done
}

case ${1:-} in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  kill) cmd_kill "${2:-}" ;;
  restart) cmd_restart "${2:-}" ;;
  urls) cmd_urls ;;
  pids) cmd_pids ;;
  *) die "usage: scripts/galera.sh start|stop|status|kill N|restart N|urls|pids" ;;
esac
