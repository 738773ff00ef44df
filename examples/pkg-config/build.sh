#!/usr/bin/env bash
# The C example through pkg-config: PKG_CONFIG_PATH=<prefix>/lib/pkgconfig examples/pkg-config/build.sh OUT
set -euo pipefail
cc -std=c11 -o "$1" "$(dirname "$0")/../c/main.c" $(pkg-config --cflags --libs strata_moe)
