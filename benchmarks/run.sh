#!/usr/bin/env bash
# Runs every kvbridge benchmark and regenerates BENCHMARKS.md at the repository root.
#
#   benchmarks/run.sh            the full run (about 35 minutes on 2 shared cores, and roughly 20
#                                more for the real-size step, whose 32k-token requests move 4 GiB)
#   benchmarks/run.sh --quick    one short iteration each: checks the pipeline, numbers mean nothing
#
# Steps: build the shaded benchmarks.jar with the Maven wrapper; record the benchmarks' fixed
# settings (settings.json); run the JMH benchmarks (raw JSON to benchmarks/target/results/jmh.json;
# the lease table under churn, with JMH's GC profiler, to jmh-churn.json; many peers to jmh-peers.json;
# a real model's KV at real size, with the GC profiler, to jmh-real-size.json, its requests of
# different TP read in place and staged to jmh-real-size-in-place.json, and what each READ trial
# read to real-size-staged.jsonl);
# run NIXL's Python binding for the NIXL comparison when the NIXL benchmark exists; profile with JFR
# the worst case of every missed goal; time to first token, streamed against whole-request
# (io.kvbridge.benchmarks.ttft.TtftRun, to ttft.jsonl); run the request path under load against an older build
# (benchmarks/request-path.sh); run multi-turn conversations through a fleet under load-only and
# cache-aware routing, with restarts (benchmarks/multi-turn.sh, to multi-turn.json); write BENCHMARKS.md with benchmarks/report.py (python3
# standard library only) from those results alone: every figure in it comes from this run.
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
profile_opts="-f 1 -wi 1 -w 500ms -i 3 -r 2s"
# The P/D path takes milliseconds per request: longer iterations, so p99 rests on enough samples.
e2e_opts="-f 1 -wi 1 -w 3s -i 3 -r 5s"
# Planning is timed per request, and the READs of the largest requests take seconds each.
plan_opts="-f 1 -wi 1 -w 500ms -i 3 -r 500ms"
if [ "${1:-}" = "--quick" ]; then
  command="benchmarks/run.sh --quick"
  opts="-f 1 -wi 1 -w 200ms -i 1 -r 200ms"
  e2e_opts="-f 1 -wi 1 -w 500ms -i 1 -r 1s"
  plan_opts="-f 1 -wi 1 -w 200ms -i 1 -r 200ms"
  profile_opts="-f 1 -wi 1 -w 200ms -i 1 -r 500ms"
fi
include=${JMH_INCLUDE:-'^io.kvbridge.benchmarks.(lease|transfer.Fake|observe).'}
start=$(date +%s)

log() { echo "[run.sh] $*" >&2; }

rm -rf "$out"
mkdir -p "$out"
log "building benchmarks.jar"
# The P/D benchmark compiles against the sample app's engine, which needs the sample app's jar as a
# plain library rather than the Spring Boot executable its build makes (see the e2e profile in
# benchmarks/pom.xml): build it unrepackaged, then put back the executable jar if there was one.
app_jar=sample-app/target/kvbridge-sample-app.jar
[ -f "$app_jar" ] && cp -p "$app_jar" "$out/sample-app.jar.keep"
restore_app_jar() { [ -f "$out/sample-app.jar.keep" ] && mv -f "$out/sample-app.jar.keep" "$app_jar"; true; }
trap restore_app_jar EXIT
build() {
  ./mvnw -B -q -pl benchmarks -am package -Dmaven.test.skip=true -Dspotless.check.skip=true \
    -Dspring-boot.repackage.skip=true -Dmaven.jar.forceCreation=true
}
# Other builds in this working tree may rewrite a module's classes while the jar is shaded: check
# that the jar holds every class the modules it bundles have now, and build again if not.
jar_complete() {
  python3 - "$jar" connector-api connector-fake connector-nixl sample-app <<'PY'
import os, sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
missing = [os.path.relpath(os.path.join(d, f), root)
           for module in sys.argv[2:]
           for root in [os.path.join(module, "target", "classes")]
           for d, _, files in os.walk(root) for f in files
           if f.endswith(".class") and os.path.relpath(os.path.join(d, f), root) not in names]
if missing:
    print(f"[run.sh] benchmarks.jar lacks {len(missing)} classes, e.g. {missing[0]}", file=sys.stderr)
    sys.exit(1)
PY
}
build
for attempt in 1 2; do
  jar_complete && break
  log "rebuilding (attempt $((attempt + 1)))"
  sleep 20
  build
done
jar_complete || { log "benchmarks.jar is still inconsistent with the module classes; stop"; exit 1; }
restore_app_jar
$report machine --out "$out/machine-start.json"
java -cp "$jar" io.kvbridge.benchmarks.RunSettings "$out/settings.json"

# What the optional sections can measure in this checkout.
has_class() { unzip -l "$jar" "$1" >/dev/null 2>&1; }
nixl_status=""
nixl_props=connector-nixl/target/nixl/nixl.properties
nixl_lib=$(sed -n 's/^kvbridge.nixl.lib.dir=//p' "$nixl_props" 2>/dev/null || true)
if ! has_class 'io/kvbridge/benchmarks/transfer/NixlReadBenchmark.class'; then
  nixl_status="the benchmarks jar holds no NIXL benchmark."
elif [ -z "$nixl_lib" ]; then
  nixl_status="connector-nixl was built without the NIXL libraries: $(sed -n 's/^kvbridge.nixl.unavailable=//p' "$nixl_props" 2>/dev/null)"
fi
# Two agents in one process: loopback transports only, the same for the JVM and for Python.
export UCX_TLS=${UCX_TLS:-self,sm,tcp} UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
export UCX_WARN_UNUSED_ENV_VARS=n NIXL_LOG_LEVEL=${NIXL_LOG_LEVEL:-WARN}
# Given on the command line, -jvmArgsAppend replaces the benchmark's own: repeat those.
nixl_jvm="-Xms1g -Xmx1g --enable-native-access=ALL-UNNAMED -Dkvbridge.nixl.home=$nixl_lib"
e2e_status=""
if ! has_class 'io/kvbridge/benchmarks/e2e/PdPathBenchmark.class'; then
  e2e_status="the benchmarks jar holds no P/D benchmark: it is compiled only with the e2e profile, which needs the sample app built as a plain jar (-Dspring-boot.repackage.skip=true)."
fi

log "running JMH: $include ($opts)"
# shellcheck disable=SC2086
java -jar "$jar" "$include" -e 'LeaseChurnBenchmark|RealSizeReadBenchmark' $opts -rf json -rff "$out/jmh.json" 2>&1 \
  | tee "$out/jmh.log" | grep -E '^(# Benchmark:|# Parameters:|Benchmark|[A-Za-z]+Benchmark\.)' >&2 || true
# A JMH_INCLUDE that names only benchmarks run in steps of their own leaves JMH nothing to run here.
[ -s "$out/jmh.json" ] || rm -f "$out/jmh.json"

if [ -z "${JMH_INCLUDE:-}" ]; then
  log "running the lease table under churn with JMH's GC profiler ($opts)"
  # shellcheck disable=SC2086
  java -jar "$jar" '^io.kvbridge.benchmarks.lease.LeaseChurnBenchmark.' $opts -prof gc \
    -rf json -rff "$out/jmh-churn.json" 2>&1 | tee "$out/jmh-churn.log" \
    | grep -E '^LeaseChurnBenchmark\.' >&2 || true
fi

if [ -z "${JMH_INCLUDE:-}" ]; then
  peer_transports="FAKE,NIXL"
  [ -n "$nixl_status" ] && peer_transports="FAKE"
  log "running many peers on $peer_transports ($opts)"
  # shellcheck disable=SC2086
  java -jar "$jar" '^io.kvbridge.benchmarks.transfer.ManyPeersBenchmark.' $opts \
    -p transport=$peer_transports -jvmArgsAppend "$nixl_jvm" -rf json -rff "$out/jmh-peers.json" \
    2>&1 | tee "$out/jmh-peers.log" | grep -E '^ManyPeersBenchmark\.' >&2 || true
fi

if [ -z "${JMH_INCLUDE:-}" ]; then
  # The planner's benchmarks declare every combination (16 TP pairs, five consumer block sizes,
  # four prompt lengths, both memory orders), more than one run has time for: a run times the
  # requests below (PLAN_TP and PLAN_BLOCKS replace their TP pairs and block sizes), reads those
  # that fit in memory through the fake transport, and counts the descriptors of every TP pair and
  # block size at one prompt length.
  plan_tp=${PLAN_TP:-1x1,1x8,8x1,2x4}
  plan_blocks=${PLAN_BLOCKS:-4,16,64}
  all_tp=1x1,1x2,1x4,1x8,2x1,2x2,2x4,2x8,4x1,4x2,4x4,4x8,8x1,8x2,8x4,8x8
  bench=io.kvbridge.benchmarks.transfer
  plan_runs=(
    "plan-head|^$bench.PlannerBenchmark.|-p tp=$plan_tp -p consumerBlock=$plan_blocks -p tokens=1024,8192,32768,131072 -p order=HEAD_MAJOR"
    "plan-block|^$bench.PlannerBenchmark.|-p tp=$plan_tp -p consumerBlock=$plan_blocks -p tokens=1024,8192,32768 -p order=BLOCK_MAJOR"
    "read-head|^$bench.PlannedReadBenchmark.|-p tp=$plan_tp -p consumerBlock=$plan_blocks -p tokens=1024,8192 -p order=HEAD_MAJOR"
    "read-block|^$bench.PlannedReadBenchmark.|-p tp=$plan_tp -p consumerBlock=16 -p tokens=1024,8192 -p order=BLOCK_MAJOR"
  )
  for run in "${plan_runs[@]}"; do
    IFS='|' read -r name regex params <<<"$run"
    log "running the read planner: $name ($plan_opts $params)"
    # shellcheck disable=SC2086
    java -jar "$jar" "$regex" $plan_opts $params -rf json -rff "$out/jmh-$name.json" \
      2>&1 | tee "$out/jmh-$name.log" | grep -E '^[A-Za-z]+Benchmark\.[a-zA-Z]+ ' >&2 || true
    if [[ $name == plan-* ]]; then
      # shellcheck disable=SC2086
      java -Xmx3g -cp "$jar" $bench.PlanCounts "$out/plan-counts-$name.json" $params
    fi
  done
  log "counting the descriptors of every TP pair and block size"
  for order in HEAD_MAJOR BLOCK_MAJOR; do
    java -Xmx3g -cp "$jar" $bench.PlanCounts "$out/plan-counts-grid-$order.json" -p tp=$all_tp \
      -p consumerBlock=4,8,16,32,64 -p tokens=8192 -p order=$order
  done
fi

# A real model's KV at real size: one request per model (Llama-3.1-8B per layer, DeepSeek-V3's MLA
# latent per layer), TP pair and prompt length, READ through the fake transport (and NIXL host
# memory where NIXL runs) beside one thread's copy of the same bytes, its planning and the
# consumer's content check, with JMH's GC profiler for the heap bytes per request. Both sides of a
# 32k-token Llama request take eight GiB of the fork's heap (RealSizeReadBenchmark.HEAP).
# REAL_TOKENS replaces the prompt lengths; --quick reads 1,024 tokens only. Runs when JMH_INCLUDE is
# unset or matches the benchmark.
real_bench=io.kvbridge.benchmarks.transfer.RealSizeReadBenchmark
real_jvm="-Xmx11g --enable-native-access=ALL-UNNAMED -Dkvbridge.nixl.home=$nixl_lib"
if [ -z "${JMH_INCLUDE:-}" ] || [[ "$real_bench.transportRead" =~ ${JMH_INCLUDE} ]]; then
  real_tokens=${REAL_TOKENS:-1024,8192,32768}
  real_opts="-f 1 -wi 1 -w 500ms -i 3 -r 500ms"
  if [ "${1:-}" = "--quick" ]; then
    real_tokens=1024
    real_opts=$opts
  fi
  real_transports="FAKE,NIXL"
  [ -n "$nixl_status" ] && real_transports="FAKE"
  log "running a real model's KV at real size on $real_transports, $real_tokens tokens ($real_opts)"
  # Each READ trial appends what it read (descriptors, staged READs, the staging model's figures).
  staged_reads="$out/real-size-staged.jsonl"
  rm -f "$staged_reads"
  # shellcheck disable=SC2086
  java -jar "$jar" "^$real_bench." $real_opts -p tokens=$real_tokens -p transport=$real_transports \
    -p staging=AUTO -jvmArgsAppend "$real_jvm -Dkvbridge.bench.staged-reads=$staged_reads" \
    -prof gc -rf json -rff "$out/jmh-real-size.json" 2>&1 \
    | tee "$out/jmh-real-size.log" | grep -E '^RealSizeReadBenchmark\.[a-zA-Z]+ ' >&2 || true
  # The requests the consumer may stage (Llama-3.1-8B, block-major, different TP), read each way.
  log "running the same requests of different TP in place and staged, for the staged reads' comparison"
  # shellcheck disable=SC2086
  java -jar "$jar" "^$real_bench.(transportRead|plan)\$" $real_opts -p tokens=$real_tokens \
    -p transport=$real_transports -p staging=NEVER,ALWAYS -p model=LLAMA_3_1_8B -p tp=2x1,1x2 \
    -jvmArgsAppend "$real_jvm -Dkvbridge.bench.staged-reads=$staged_reads" \
    -prof gc -rf json -rff "$out/jmh-real-size-in-place.json" 2>&1 \
    | tee "$out/jmh-real-size-in-place.log" | grep -E '^RealSizeReadBenchmark\.[a-zA-Z]+ ' >&2 || true
  java -Xmx3g -cp "$jar" io.kvbridge.benchmarks.transfer.RealSizeCounts \
    "$out/real-size-counts.json" -p tokens=$real_tokens
fi

if [ -z "$e2e_status" ] && [ -z "${JMH_INCLUDE:-}" ]; then
  log "running the P/D path ($e2e_opts)"
  # shellcheck disable=SC2086
  connectors="fake,nixl"
  [ -n "$nixl_status" ] && connectors="fake"
  java -jar "$jar" '^io.kvbridge.benchmarks.e2e.' $e2e_opts -p connector=$connectors \
    -jvmArgsAppend "$nixl_jvm -Dkvbridge.bench.pd-path=$out/pd-path.jsonl" \
    -rf json -rff "$out/jmh-e2e.json" \
    2>&1 | tee "$out/jmh-e2e.log" | grep -E '^(# Benchmark:|[A-Za-z]+Benchmark\.[a-zA-Z]+ )' >&2 || true
fi

if [ -z "${JMH_INCLUDE:-}" ]; then
  # Time to first token, streamed against whole-request: Llama-3.1-8B's KV, P and D in one JVM per
  # connector; a 32k-token prompt takes four GiB on either side (TTFT_TOKENS replaces the lengths).
  ttft_tokens=${TTFT_TOKENS:-32,128,512,1024,4096,32768}
  [ "${1:-}" = "--quick" ] && ttft_tokens=128
  ttft_connectors="fake nixl"
  [ -n "$nixl_status" ] && ttft_connectors="fake"
  for connector in $ttft_connectors; do
    log "running time to first token on $connector, $ttft_tokens tokens"
    java -Xmx10g --enable-native-access=ALL-UNNAMED -Dkvbridge.nixl.home="$nixl_lib" -cp "$jar" \
      io.kvbridge.benchmarks.ttft.TtftRun "$out/ttft.jsonl" "$connector" "$ttft_tokens" \
      2>>"$out/ttft.log" || log "the time-to-first-token run on $connector failed; see $out/ttft.log"
  done
fi

if [ -z "${JMH_INCLUDE:-}" ]; then
  log "running the request path under load, this build against an older one"
  # shellcheck disable=SC2046
  benchmarks/request-path.sh "$out" $([ "${1:-}" = "--quick" ] && echo --quick)
fi

if [ -z "${JMH_INCLUDE:-}" ]; then
  log "running multi-turn conversations through a fleet, load-only and cache-aware routing"
  benchmarks/multi-turn.sh "$out" $([ "${1:-}" = "--quick" ] && echo --quick) \
    2>>"$out/multi-turn.log" || log "the multi-turn run failed; see $out/multi-turn.log"
fi

if [ -z "$nixl_status" ] && [ -z "${JMH_INCLUDE:-}" ]; then
  wheel=${NIXL_WHEEL:-$HOME/.cache/kvbridge/nixl/nixl_cu13-1.5.1-cp311-cp311-manylinux_2_28_x86_64.whl}
  venv=benchmarks/target/nixl-venv
  if [ ! -x "$venv/bin/python" ]; then
    log "creating $venv with only the NIXL wheel and numpy (the one module its binding imports)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --no-deps "$wheel"
    "$venv/bin/pip" install -q --no-deps numpy
  fi
  log "running the NIXL READ and content check through kvbridge (UCX_TLS=$UCX_TLS)"
  # The prepared-list READ alternates its iterations with rounds of the Python binding's prepared
  # READ (PythonRounds), appended to python-rounds.jsonl.
  rounds_jvm="-Dkvbridge.bench.python=$root/$venv/bin/python"
  rounds_jvm+=" -Dkvbridge.bench.python-script=$root/benchmarks/python/nixl_read_bench.py"
  rounds_jvm+=" -Dkvbridge.bench.python-rounds=$root/$out/python-rounds.jsonl"
  # shellcheck disable=SC2086
  java -jar "$jar" '^io.kvbridge.benchmarks.transfer.Nixl' $opts \
    -jvmArgsAppend "$nixl_jvm $rounds_jvm" -rf json -rff "$out/jmh-nixl.json" \
    2>&1 | tee "$out/jmh-nixl.log" | grep -E '^(# Parameters:|[A-Za-z]+Benchmark\.[a-zA-Z]+ )' >&2 || true
  log "running the same READ through NIXL's Python binding"
  if ! "$venv/bin/python" benchmarks/python/nixl_read_bench.py --out "$out/nixl-python.json" \
    --seconds 0.5 --rounds 5 2> >(grep -v ' NIXL INFO ' >&2); then
    nixl_status="the Python binding run failed; see the output of benchmarks/run.sh."
  fi
fi

if [ "${PROFILE:-1}" != "0" ]; then
  $report plan-profiles --results "$out" | while IFS=$'\t' read -r family regex params; do
    log "profiling $family: $regex $params"
    dir="$out/jfr/$family"
    extra=()
    extra_text=""
    case "$family" in
      nixl-*|many-peers)
        extra=(-jvmArgsAppend "$nixl_jvm")
        extra_text=" -jvmArgsAppend '$nixl_jvm' (UCX_TLS=$UCX_TLS UCX_NET_DEVICES=$UCX_NET_DEVICES)"
        ;;
      real-size-*)
        extra=(-jvmArgsAppend "$real_jvm")
        extra_text=" -jvmArgsAppend '$real_jvm' (UCX_TLS=$UCX_TLS UCX_NET_DEVICES=$UCX_NET_DEVICES)"
        ;;
    esac
    # shellcheck disable=SC2086
    java -jar "$jar" "$regex" $params $profile_opts "${extra[@]}" -prof "jfr:dir=$dir" \
      >"$out/jfr-$family.log" 2>&1 || true
    # A benchmark that failed before recording leaves no directory: no profile, and the run goes on.
    recording=$(find "$dir" -name '*.jfr' 2>/dev/null | head -n 1 || true)
    if [ -n "$recording" ]; then
      $report summarize-jfr --jfr "$recording" --out "$out/jfr/$family.json" \
        --benchmark "${regex//[\^\$]/}" --params "$params" \
        --command "java -jar $jar '$regex' $params $profile_opts -prof jfr$extra_text"
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
    "plan_options": "$plan_opts",
    "real_size_options": "${real_opts:-}",
    "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime($start)),
    "minutes": round((time.time() - $start) / 60, 1),
    "nixl_status": """$nixl_status""",
    "e2e_status": """$e2e_status""",
}, open(sys.argv[1], "w"), indent=2)
PY
$report write --results "$out" --out BENCHMARKS.md
log "wrote BENCHMARKS.md ($(( ($(date +%s) - start) / 60 )) min)"
