#!/usr/bin/env bash
# Generates the Swift client's code (clients/LandmarkRemarkClient/Sources/LandmarkRemarkAPI/
# Generated) from openapi/openapi.json with apple/swift-openapi-generator. The code is
# committed: apps build the client without the generator. With --check, generates into a
# temporary folder and fails when the committed code differs (make test runs that), so the
# client cannot drift from the contract.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/swift-flags.sh

TARGET=clients/LandmarkRemarkClient/Sources/LandmarkRemarkAPI
TOOL=scripts/openapi-generator
swift build "${SWIFT_FLAGS[@]}" --package-path "$TOOL" --product swift-openapi-generator >/dev/null
GENERATOR=$(swift build --package-path "$TOOL" --show-bin-path)/swift-openapi-generator

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# It prints its settings on stderr: shown only when it fails.
if ! "$GENERATOR" generate --config "$TARGET/openapi-generator-config.yaml" --output-directory "$OUT" openapi/openapi.json \
    >"$OUT.log" 2>&1; then
    cat "$OUT.log" >&2
    exit 1
fi
rm -f "$OUT.log"

if [ "${1:-}" = "--check" ]; then
    if ! diff -r -q "$OUT" "$TARGET/Generated" >/dev/null; then
        diff -r -u "$TARGET/Generated" "$OUT" | head -40 >&2 || true
        echo "the Swift client's generated code is out of date with openapi/openapi.json: run scripts/generate-client.sh and commit" >&2
        exit 1
    fi
    echo "Swift client's generated code matches openapi/openapi.json"
else
    rm -rf "$TARGET/Generated"
    mkdir -p "$TARGET/Generated"
    cp "$OUT"/*.swift "$TARGET/Generated/"
    echo "generated $(ls "$TARGET/Generated" | wc -l) files into $TARGET/Generated"
fi
