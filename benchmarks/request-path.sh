#!/usr/bin/env bash
# The request path under load, this build against an older one, in one run (benchmarks/run.sh
# calls it; it also runs alone). Builds the older commit's sample app from a git worktree under
# benchmarks/target/request-path/ (once; kept between runs) and this build's executable sample app,
# then runs io.kvbridge.benchmarks.requestpath.RequestPathRun from benchmarks.jar: both builds as P,
# D and a router in separate JVMs, closed-loop clients, rounds interleaved, and one JFR-profiled
# window per build whose profiles benchmarks/report.py summarizes (jfr/request-path-*.json; this
# build's decode node's is also jfr/request-path.json, the goal's profile). A wrong answer (one that
# differs from the decode node computing the prompt alone) stops the run.
#
#   benchmarks/request-path.sh RESULTS_DIR [--quick]
#
# Environment: REQUEST_PATH_BASE, the older commit (default 64fa177, the build the request path's
# goal is measured against); REQUEST_PATH_OPTS replaces the rounds and windows
# (default "--rounds 3 --clients 24 --warmup 15 --measure 45").
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:?results directory}
base=${REQUEST_PATH_BASE:-64fa177}
opts=${REQUEST_PATH_OPTS:-"--rounds 3 --clients 24 --warmup 15 --measure 45"}
[ "${2:-}" = "--quick" ] && opts="--rounds 1 --clients 8 --warmup 3 --measure 5"
jar=benchmarks/target/benchmarks.jar
app=sample-app/target/kvbridge-sample-app.jar
work=benchmarks/target/request-path
tree=$work/build-$base
old_app=$tree/sample-app/target/kvbridge-sample-app.jar

log() { echo "[request-path.sh] $*" >&2; }
executable() { unzip -l "$1" 'BOOT-INF/*' >/dev/null 2>&1; }

if ! executable "$old_app"; then
  log "building $base's sample app in $tree"
  rm -rf "$tree"
  git worktree prune
  git worktree add --detach "$tree" "$base" >&2
  (cd "$tree" && ./mvnw -B -q -pl sample-app -am package -DskipTests -Dspotless.check.skip=true) >&2
fi
log "building this build's sample app"
./mvnw -B -q -pl sample-app -am package -DskipTests -Dspotless.check.skip=true >&2
rm -rf "$work/run" "$out/request-path-jfr"
mkdir -p "$out/jfr"
# shellcheck disable=SC2086
java -cp "$jar" io.kvbridge.benchmarks.requestpath.RequestPathRun \
  --build "this=$app" --build "$base=$old_app" $opts \
  --work "$work/run" --out "$out/request-path.json" --jfr "$out/request-path-jfr"
for build in this "$base"; do
  for node in prefill decode router; do
    recording="$out/request-path-jfr/$build/$node.jfr"
    if [ -f "$recording" ]; then
      python3 benchmarks/report.py summarize-jfr --jfr "$recording" \
        --out "$out/jfr/request-path-$build-$node.json" --benchmark "request path, $build, $node" \
        --command "benchmarks/request-path.sh $out"
      rm -f "$recording"
    fi
  done
done
if [ -f "$out/jfr/request-path-this-decode.json" ]; then
  cp "$out/jfr/request-path-this-decode.json" "$out/jfr/request-path.json"
fi
