#!/bin/sh
# Builds the replay harness three ways, into $1 (default /tmp/foam-costs):
#   replay-o2      the codelets as the host runtime builds them (poplar-bridge/build.rs:
#                  -O2, plus -mf16c where the machine has F16C)
#   replay-o3      -O3 without F16C (portable half conversions), for comparison
#   replay-probe   -O2 with FOAM_PROBE counting events (features for the fit)
#   replay-nosh    -O2 with FOAM_COST_NO_SH: every shard opened without its SH colour,
#                  so on SH recordings the colour's instructions are replay-o2's minus these
#   replay-novec   -O2 without the vectorizer, for loops the tile runs scalar (it has no
#                  32-bit integer vector add): the spill store's sum of the tracers' words
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-/tmp/foam-costs}
mkdir -p "$out"
f16c=
grep -q ' f16c' /proc/cpuinfo && f16c=-mf16c
inc="-I$root/codelets/include -I$root/poplar-bridge/runtime/include"
common="-std=c++17 -g -no-pie -fPIC -ffunction-sections -fdata-sections -Wall -Wextra -Wdouble-promotion $inc"
srcs="$here/replay.cpp $root/poplar-bridge/runtime/src/registry.cpp $root/codelets/vertices/*.cpp"
g++ $common -O2 $f16c $srcs -o "$out/replay-o2"
g++ $common -O3 $srcs -o "$out/replay-o3"
g++ $common -O2 $f16c -DFOAM_PROBE_BUILD -include "$here/probe_counts.h" $srcs -o "$out/replay-probe"
g++ $common -O2 $f16c -DFOAM_COST_NO_SH $srcs -o "$out/replay-nosh"
g++ $common -O2 -fno-tree-vectorize $f16c $srcs -o "$out/replay-novec"
echo "built $out/replay-o2 $out/replay-o3 $out/replay-probe $out/replay-nosh $out/replay-novec"
