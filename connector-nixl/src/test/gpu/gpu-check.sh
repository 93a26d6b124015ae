#!/usr/bin/env bash
# Runs the VRAM -> VRAM NIXL check (io.kvbridge.nixl.GpuTransferCheck) on a machine with an NVIDIA
# GPU, from the bundle that assemble.sh made; needs no Java, Maven or NIXL installed there.
# Usage: gpu-check.sh [one|two] [vram|dram] [BLOCK_SIZE_BYTES...]   the transfer check (default: two
#        processes, vram, block sizes 4 KiB, 64 KiB, 1 MiB, 16 MiB)
#        gpu-check.sh compare [one|two] [BYTES...]   READ VRAM -> VRAM against cudaMemcpy device to
#        device, one piece of 64 KiB, 1 MiB, 16 MiB, 256 MiB (default), written to gpu-compare.json
#        (OUT=DIR puts it there); copy it to benchmarks/target/results/ for benchmarks/report.py
#        gpu-check.sh suite   the transport conformance suite on device memory (JUnit)
# Environment: WORK (where the runtime and NIXL are unpacked, default /tmp/kvbridge-gpu), UCX_* and
# NIXL_LOG_LEVEL (default WARN) pass through.
set -euo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-/tmp/kvbridge-gpu}
mkdir -p "$work"
[ -x "$work/jre/bin/java" ] || tar -C "$work" -xJf "$bundle/jre.tar.xz"
[ -f "$work/nixl/libnixl_capi.so" ] || { mkdir -p "$work/nixl" && tar -C "$work/nixl" -xJf "$bundle/nixl.tar.xz"; }

# The NVIDIA driver (libcuda.so.1, libnvidia-ml.so.1) and the CUDA 13 runtime (libcudart.so.13):
# the cuda preset's JNI library and UCX's CUDA modules need them on the library path.
paths=""
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/local/cuda/lib64 \
  /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && paths="$paths:$d"
done
libs=$(ldconfig -p)
if ! grep -q 'libcudart.so.13 ' <<<"$libs"; then
  cudart=$(find /usr /opt -name 'libcudart.so.13*' -print -quit 2>/dev/null || true)
  [ -n "$cudart" ] && paths="$paths:$(dirname "$cudart")"
fi
for so in libssl.so.3 libcrypto.so.3 libz.so.1; do
  grep -q "$so " <<<"$libs" || paths="$paths:$bundle/syslib"
done
export LD_LIBRARY_PATH="${paths#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KVBRIDGE_NIXL_HOME="$work/nixl"
export UCX_WARN_UNUSED_ENV_VARS=n
# UCX 1.23 turns off CUDA IPC for GET (NIXL's READ) where it finds no NVLink, e.g. two processes on
# one GPU; READs then crawl through TCP emulation (about 0.5 GB/s on an H200). Allow it by default.
export UCX_CUDA_IPC_ENABLE_GET_ZCOPY=${UCX_CUDA_IPC_ENABLE_GET_ZCOPY:-y}
export NIXL_LOG_LEVEL=${NIXL_LOG_LEVEL:-WARN}
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi -L 2>/dev/null || echo "(nvidia-smi not available)"

java=("$work/jre/bin/java" -Xmx8g --enable-native-access=ALL-UNNAMED)
if [ "${1:-}" = suite ]; then
  # The transport conformance suite on device memory, and the memory-mode tests.
  exec "${java[@]}" -jar "$bundle/junit/junit-console.jar" execute --disable-banner \
    --details=tree --class-path "$(printf '%s:' "$bundle"/lib/*.jar "$bundle"/junit/*.jar)" \
    --select-class io.kvbridge.nixl.NixlVramTransportConformanceTest \
    --select-class io.kvbridge.nixl.NixlMemoryModeTest
fi
exec "${java[@]}" -Dkvbridge.gpu.compare-out="${OUT:-.}/gpu-compare.json" -cp "$bundle/lib/*" \
  io.kvbridge.nixl.GpuTransferCheck "$@"
