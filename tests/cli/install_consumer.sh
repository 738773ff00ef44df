#!/usr/bin/env bash
# Installs the built library into a scratch prefix and builds a consumer with find_package.
set -euo pipefail
cli=$1
build_dir=$(cd "$(dirname "$cli")" && pwd)
source_dir=$(cd "$(dirname "$0")/../install" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" > "$scratch/install.log"
cmake -S "$source_dir" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" > "$scratch/configure.log" \
  || { cat "$scratch/configure.log"; exit 1; }
cmake --build "$scratch/build" > "$scratch/build.log" || { cat "$scratch/build.log"; exit 1; }
"$scratch/build/consumer"
echo "install_consumer: find_package(strata_moe) consumer built and ran"
