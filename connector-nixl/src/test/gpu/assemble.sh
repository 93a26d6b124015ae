#!/usr/bin/env bash
# Assembles the self-contained GPU check bundle in connector-nixl/target/gpu-check (about 48 MiB):
#   jre.tar.xz     a jlinked Java runtime (java.base, java.logging, jdk.unsupported) built here
#   lib/*.jar      connector-api, connector-nixl (main + test classes), JavaCPP, the cuda preset
#   nixl.tar.xz    the NIXL libraries the check loads (libnixl_capi.so's closure, plugins/UCX,
#                  ucx/ cma + cuda modules), taken from target/nixl/lib
#   junit/         the JUnit console, AssertJ, Awaitility and connector-api's conformance suite
#   syslib/        libssl.so.3, libcrypto.so.3, libz.so.1 of this machine, used only where the
#                  GPU machine lacks them
#   gpu-check.sh   runs the check there
# Run from the repository root after `./mvnw -B -pl connector-nixl -am install -DskipTests`.
set -euo pipefail
root=$(pwd)
module="$root/connector-nixl"
out="$module/target/gpu-check"
lib="$module/target/nixl/lib"
[ -f "$lib/libnixl_capi.so" ] || { echo "no $lib/libnixl_capi.so: build connector-nixl first" >&2; exit 1; }
[ -d "$module/target/test-classes/io/kvbridge/nixl" ] || { echo "no test classes: run ./mvnw -pl connector-nixl test-compile" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/lib" "$out/syslib"

# Jars: the module's runtime class path plus its own classes and test classes.
./mvnw -B -q -pl connector-nixl dependency:build-classpath -DincludeScope=runtime \
  -Dmdep.outputFile="$out/classpath.txt"
tr ":" "\n" <"$out/classpath.txt" | while read -r jar || [ -n "$jar" ]; do [ -n "$jar" ] && cp "$jar" "$out/lib/"; done
rm "$out/classpath.txt"
# The JUnit console and what the VRAM conformance suite needs besides, for `gpu-check.sh suite`.
mkdir -p "$out/junit"
./mvnw -B -q -pl connector-nixl dependency:build-classpath -DincludeScope=test \
  -Dmdep.outputFile="$out/classpath.txt"
# The console of the JUnit version the build tests with (managed by Spring Boot's BOM).
junit=$(tr ":" "\n" <"$out/classpath.txt" | sed -n 's|.*/junit-platform-engine/\([^/]*\)/.*|\1|p')
./mvnw -B -q dependency:get -Dartifact="org.junit.platform:junit-platform-console-standalone:$junit" >/dev/null
tr ":" "\n" <"$out/classpath.txt" | grep -E '/(assertj-core|byte-buddy|awaitility|hamcrest|opentest4j|apiguardian-api)-|-tests\.jar$' |
  while read -r jar; do cp "$jar" "$out/junit/"; done
rm "$out/classpath.txt"
cp "$HOME/.m2/repository/org/junit/platform/junit-platform-console-standalone/$junit/junit-platform-console-standalone-$junit.jar" \
  "$out/junit/junit-console.jar"
jar --create --file "$out/lib/connector-nixl.jar" -C "$module/target/classes" .
jar --create --file "$out/lib/connector-nixl-tests.jar" -C "$module/target/test-classes" .

# Java runtime.
jlink --add-modules java.base,java.logging,jdk.unsupported --strip-debug --no-header-files \
  --no-man-pages --compress=2 --output "$out/jre"
tar -C "$out" -cJf "$out/jre.tar.xz" jre
rm -rf "$out/jre"

# NIXL: what libnixl_capi.so and the UCX plugin load, plus the UCX modules for shared memory and
# CUDA (the CUDA ones need the NVIDIA driver, present on the GPU machine).
(
  cd "$lib"
  {
    ldd libnixl_capi.so plugins/libplugin_UCX.so | awk '/=> \// {print $3}' | xargs -r realpath |
      sed -n "s|^$lib/||p"
    echo libnixl_capi.so
    echo plugins/libplugin_UCX.so
    ls ucx/libuct_cma.so* ucx/libuct_cuda.so* ucx/libucm_cuda.so*
  } | sort -u >"$out/nixl-files.txt"
  tar -cJf "$out/nixl.tar.xz" -T "$out/nixl-files.txt"
)
rm "$out/nixl-files.txt"

for so in libssl.so.3 libcrypto.so.3 libz.so.1; do
  path=$(ldconfig -p | awk -v n="$so" '$1 == n && /x86-64/ {print $NF; exit}')
  [ -n "$path" ] && cp -L "$path" "$out/syslib/"
done

cp "$module/src/test/gpu/gpu-check.sh" "$out/"
du -sh "$out"
ls -la "$out" "$out/lib"
