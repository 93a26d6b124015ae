#!/usr/bin/env bash
# Runs every kvbridge benchmark and regenerates BENCHMARKS.md at the repository root.
#
#   benchmarks/run.sh            the full run (about 12-15 minutes on 2 cores)
#   benchmarks/run.sh --quick    one short iteration each: checks the pipeline, numbers mean nothing
#
# Steps: build the shaded benchmarks.jar with the Maven wrapper; run the JMH benchmarks (raw JSON
# to benchmarks/target/results/jmh.json); run NIXL's Python binding for the NIXL comparison when
# the NIXL benchmark exists; profile with JFR the worst case of every missed goal; write
# BENCHMARKS.md with benchmarks/report.py (python3 standard library only).
#
# Environment: JMH_OPTS replaces the JMH iteration settings; JMH_INCLUDE replaces the benchmark
# regex; PROFILE=0 skips the JFR profiles; NIXL_WHEEL points at the nixl-cu13 wheel (default: the
# cache connector-nixl's build fills, ~/.cache/kvbridge/nixl).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=benchmarks/target/results
jar=benchmarks/target/benchmarks.jar
report="python3 benchmarks/report.py"
command="benchmarks/run.sh"
opts=${JMH_OPTS:-"-f 1 -wi 2 -w 500ms -i 5 -r 500ms"}
profile_opts="-f 1 -wi 1 -w 500ms -i 3 -r 1s"
if [ "${1:-}" = "--quick" ]; then
  command="benchmarks/run.sh --quick"
  opts="-f 1 -wi 1 -w 200ms -i 1 -r 200ms"
  e2e_opts="-f 1 -wi 1 -w 500ms -i 1 -r 1s"
  profile_opts="-f 1 -wi 1 -w 200ms -i 1 -r 500ms"
fi
include=${JMH_INCLUDE:-'^io.kvbridge.benchmarks.(lease|transfer).'}
# The P/D path takes milliseconds per request: longer iterations, so p99 rests on enough samples.
e2e_opts="-f 1 -wi 1 -w 3s -i 3 -r 5s"
start=$(date +%s)

log() { echo "[run.sh] $*" >&2; }

rm -rf "$out"
mkdir -p "$out"
log "building benchmarks.jar"
./mvnw -B -q -pl benchmarks -am package -Dmaven.test.skip=true -Dspotless.check.skip=true \
  -Dspring-boot.repackage.skip=true
$report machine --out "$out/machine-start.json"

# What the optional sections can measure in this checkout.
has_class() { unzip -l "$jar" "$1" >/dev/null 2>&1; }
nixl_status=""
if ! has_class 'io/kvbridge/benchmarks/transfer/NixlReadBenchmark.class'; then
  nixl_status="connector-nixl has no Transport implementation yet (only its C API binding), so there is nothing in kvbridge to measure against NIXL's Python binding."
fi
e2e_status=""
e2e_description=""
if ! has_class 'io/kvbridge/benchmarks/e2e/PdPathBenchmark.class'; then
  e2e_status="the benchmarks jar holds no P/D benchmark: it is compiled only with the e2e profile, which needs the sample app built as a plain jar (-Dspring-boot.repackage.skip=true)."
else
  e2e_description="In-process, on the sample app's engine API: a prefill engine and a decode engine, each with its own connector, one request in flight. P/D: the prefill engine computes the prompt with max_tokens=1 and a lease (as the router asks), then the decode engine loads the prompt's full blocks through the connector and generates; colocated: one engine computes the prompt and generates. Added latency = P/D − colocated at the same percentile (JMH sample mode); requests/s = 1 / mean time per request, one request in flight."
fi

log "running JMH: $include ($opts)"
# shellcheck disable=SC2086
java -jar "$jar" "$include" $opts -rf json -rff "$out/jmh.json" 2>&1 | tee "$out/jmh.log" \
  | grep -E '^(# Benchmark:|# Parameters:|Benchmark|[A-Za-z]+Benchmark\.)' >&2 || true

if [ -z "$e2e_status" ] && [ -z "${JMH_INCLUDE:-}" ]; then
  log "running the P/D path ($e2e_opts)"
  # shellcheck disable=SC2086
  java -jar "$jar" '^io.kvbridge.benchmarks.e2e.' $e2e_opts -rf json -rff "$out/jmh-e2e.json" \
    2>&1 | tee "$out/jmh-e2e.log" | grep -E '^(# Benchmark:|[A-Za-z]+Benchmark\.[a-zA-Z]+ )' >&2 || true
fi

if [ -z "$nixl_status" ]; then
  wheel=${NIXL_WHEEL:-$HOME/.cache/kvbridge/nixl/nixl_cu13-1.5.1-cp311-cp311-manylinux_2_28_x86_64.whl}
  venv=benchmarks/target/nixl-venv
  if [ ! -x "$venv/bin/python" ]; then
    log "creating $venv with only the NIXL wheel and numpy"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --no-deps "$wheel"
    "$venv/bin/pip" install -q --no-deps numpy
  fi
  log "running NIXL's Python binding"
  "$venv/bin/python" benchmarks/python/nixl_read_bench.py --out "$out/nixl-python.json" \
    --seconds 0.5 --rounds 5 2>&1 | grep -v ' NIXL INFO ' >&2 || nixl_status="the Python binding run failed; see the log above."
fi

if [ "${PROFILE:-1}" != "0" ]; then
  $report plan-profiles --results "$out" | while IFS=$'\t' read -r family regex params; do
    log "profiling $family: $regex $params"
    dir="$out/jfr/$family"
    # shellcheck disable=SC2086
    java -jar "$jar" "$regex" $params $profile_opts -prof "jfr:dir=$dir" >"$out/jfr-$family.log" 2>&1 || true
    recording=$(find "$dir" -name '*.jfr' 2>/dev/null | head -n 1)
    if [ -n "$recording" ]; then
      $report summarize-jfr --jfr "$recording" --out "$out/jfr/$family.json" \
        --benchmark "${regex//[\^\$]/}" --params "$params" \
        --command "java -jar $jar '$regex' $params $profile_opts -prof jfr"
    else
      log "no JFR recording for $family (see $out/jfr-$family.log)"
    fi
  done
fi

$report machine --out "$out/machine-end.json"
python3 - "$out/run.json" <<PY
import json, sys, time
json.dump({
    "command": "$command",
    "jmh_options": "$opts",
    "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime($start)),
    "minutes": round((time.time() - $start) / 60, 1),
    "nixl_status": """$nixl_status""",
    "e2e_status": """$e2e_status""",
    "e2e_description": """$e2e_description""",
}, open(sys.argv[1], "w"), indent=2)
PY
$report write --results "$out" --out BENCHMARKS.md
log "wrote BENCHMARKS.md ($(( ($(date +%s) - start) / 60 )) min)"
