#!/usr/bin/env bash
# Builds the playground's WebAssembly module into playground/www/pkg/ (where `cel` embeds
# it when it is built next), and checks its size against the budget (3 MB compressed).
#
#   playground/build.sh          # then: cargo build --release -p cel-cli; cel playground
#   playground/build.sh DIR      # also copies the whole static site to DIR, for any web server
#
# Needs the wasm32-unknown-unknown target (`rustup target add wasm32-unknown-unknown`) and
# wasm-bindgen-cli at the version of the wasm-bindgen crate in Cargo.lock
# (`cargo install wasm-bindgen-cli --version X`). Honours CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

version="$(sed -n '/^name = "wasm-bindgen"$/{n;s/^version = "\(.*\)"$/\1/p}' Cargo.lock)"
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $version"; then
    echo "playground/build.sh: needs wasm-bindgen-cli $version: cargo install wasm-bindgen-cli --version $version" >&2
    exit 1
fi
target_dir="${CARGO_TARGET_DIR:-target}"
# The module's stack (8 MiB, as a thread's) is set in .cargo/config.toml.
cargo build --release --locked -p celerity-playground --target wasm32-unknown-unknown
out=playground/www/pkg
rm -rf "$out"
wasm-bindgen --target web --no-typescript --out-dir "$out" \
    "$target_dir/wasm32-unknown-unknown/release/celerity_playground.wasm"
module="$out/celerity_playground_bg.wasm"
raw=$(wc -c < "$module")
compressed=$(gzip -9 -c "$module" | wc -c)
echo "module: $raw bytes, $compressed bytes compressed (gzip -9)"
if [ "$compressed" -gt 3000000 ]; then
    echo "playground/build.sh: the compressed module is over the budget of 3 MB" >&2
    exit 1
fi
if [ $# -gt 0 ]; then
    mkdir -p "$1/examples"
    site="$(cd "$1" && pwd)"
    cp -r playground/www/. "$site/"
    (cd examples && find . \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) -not -path './wasi-policy/*' \
        -exec cp --parents {} "$site/examples/" \;)
    echo "site: $site"
fi
