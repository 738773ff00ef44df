#!/usr/bin/env bash
# Installs the built library into a scratch prefix and builds the examples against it the ways a
# user would: the C example in a C-only CMake project (find_package), the C++ example
# (find_package), the C example through pkg-config, and the C example against the build tree
# (strata_moe_DIR=<build dir>, no install). Each must build and run on the bundled model.
# Usage: install_consumer.sh <strata-moe> <tests/data>
set -euo pipefail
cli=$1
model="$2/vectors/moe/model.gguf"
build_dir=$(cd "$(dirname "$cli")" && pwd)
examples=$(cd "$(dirname "$0")/../../examples" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "install_consumer: $*" >&2; exit 1; }

cmake --install "$build_dir" --prefix "$scratch/prefix" > "$scratch/install.log"

# consume <name> <source dir> <binary> <cmake args...>: configure, build and run one consumer.
consume() {
  local name=$1 source=$2 binary=$3
  shift 3
  cmake -S "$source" -B "$scratch/$name" -G Ninja "$@" > "$scratch/$name.configure.log" 2>&1 \
    || { cat "$scratch/$name.configure.log"; fail "$name: configure failed"; }
  cmake --build "$scratch/$name" > "$scratch/$name.build.log" 2>&1 \
    || { cat "$scratch/$name.build.log"; fail "$name: build failed"; }
  "$scratch/$name/$binary" "$model" > "$scratch/$name.out" || fail "$name: run failed"
  cat "$scratch/$name.out"
}

consume c_find_package "$examples/c" example_c -DCMAKE_PREFIX_PATH="$scratch/prefix"
grep -q "sum(y) = " "$scratch/c_find_package.out" || fail "C example printed no result"
if grep -q "^CMAKE_CXX_COMPILER:" "$scratch/c_find_package/CMakeCache.txt"; then
  fail "the C-only consumer enabled C++"
fi
consume cpp_find_package "$examples/cpp" example_cpp -DCMAKE_PREFIX_PATH="$scratch/prefix"
[[ $(grep -c "sum(y) = " "$scratch/cpp_find_package.out") == 2 ]] || fail "C++ example: expected q8 and q10 lines"
consume c_build_tree "$examples/c" example_c -Dstrata_moe_DIR="$build_dir"
cmp -s "$scratch/c_find_package.out" "$scratch/c_build_tree.out" || fail "build-tree consumer printed another result"

libdir=$(dirname "$(find "$scratch/prefix" -name strata_moe.pc | head -1)")
[[ -f "$libdir/strata_moe.pc" ]] || fail "no strata_moe.pc installed"
PKG_CONFIG_PATH="$libdir" "$examples/pkg-config/build.sh" "$scratch/example_pc" > "$scratch/pc.log" 2>&1 \
  || { cat "$scratch/pc.log"; fail "pkg-config build failed"; }
LD_LIBRARY_PATH="$(dirname "$libdir")" "$scratch/example_pc" "$model" > "$scratch/pc.out" || fail "pkg-config example failed"
cmp -s "$scratch/c_find_package.out" "$scratch/pc.out" || fail "pkg-config consumer printed another result"

# add_subdirectory: configure only (building would compile the library again).
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
cmake -S "$(dirname "$0")/../install/subdirectory" -B "$scratch/subdirectory" -G Ninja \
  -DSTRATA_MOE_SOURCE_DIR="$source_dir" > "$scratch/subdirectory.log" 2>&1 \
  || { cat "$scratch/subdirectory.log"; fail "add_subdirectory configure failed"; }
echo "install_consumer: C (find_package, C-only), C++, pkg-config and build-tree consumers built and ran;" \
  "add_subdirectory configured the library alone"
