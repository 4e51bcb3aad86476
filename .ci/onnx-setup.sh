#!/usr/bin/env bash
# Set up what `go test -tags onnx ./crystal/embedder/` needs, idempotently:
#   - Debian's python3-onnx, which crystal/embedder/testdata/tiny_model.py uses to
#     write a tiny random BERT-shaped model at test time;
#   - libonnxruntime.so (ONNX Runtime 1.28.2, linux-x64), taken from the npm
#     package sherpa-onnx-linux-x64@1.13.8 with `npm pack` + tar (nothing is
#     installed, no install script runs) and checked against its sha256.
# The last line on stdout is the export to use:
#   eval "$(bash .ci/onnx-setup.sh | tail -n 1)"
# Everything else goes to stderr. Directory: $EVIDENT_ONNX_DIR, default
# ~/.cache/evident/onnxruntime.
set -euo pipefail

pkg=sherpa-onnx-linux-x64
ver=1.13.8
so_sha256=4b3607aebd1784b26b6f9b20e4bd974c7ab8287043e4d095cb7d2cb40b5e566e
dir="${EVIDENT_ONNX_DIR:-$HOME/.cache/evident/onnxruntime}/$pkg-$ver"
lib="$dir/libonnxruntime.so"

log() { echo "onnx-setup: $*" >&2; }

if ! /usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null; then
  log "installing python3-onnx (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >&2
  apt-get install -y --no-install-recommends python3-onnx >&2
fi
/usr/bin/python3 -c 'import onnx; print("onnx-setup: python3-onnx", onnx.__version__)' >&2

have_lib() { [ -f "$lib" ] && echo "$so_sha256  $lib" | sha256sum -c --status; }

if ! have_lib; then
  log "fetching $pkg@$ver from npm (npm pack, no install)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null)
  tar -xzf "$tmp/$pkg-$ver.tgz" -C "$tmp" package/libonnxruntime.so
  mkdir -p "$dir"
  mv -f "$tmp/package/libonnxruntime.so" "$lib.tmp"
  mv -f "$lib.tmp" "$lib"
  if ! have_lib; then
    log "sha256 of $lib does not match $so_sha256"; exit 1
  fi
fi
log "ONNX Runtime library at $lib"
echo "export ONNXRUNTIME_LIB=$lib"
