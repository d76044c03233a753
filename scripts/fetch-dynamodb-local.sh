#!/usr/bin/env bash
# Puts AWS's DynamoDB Local (DynamoDBLocal.jar and its native libraries) into .cache/dynamodb-local.
# The jar ships inside the npm package amplify-dynamodb-simulator (folder emulator/); `npm pack`
# fetches only that package's tarball, none of its Node dependencies. Idempotent.
set -euo pipefail
VERSION="${DYNAMODB_SIMULATOR_VERSION:-2.9.30}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="${DYNAMODB_LOCAL_DIR:-$ROOT/.cache/dynamodb-local}"
if [ -f "$DEST/DynamoDBLocal.jar" ] && [ -f "$DEST/.version" ] && [ "$(cat "$DEST/.version")" = "$VERSION" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "npm is required to fetch DynamoDB Local" >&2; exit 1; }
command -v java >/dev/null || { echo "java (17 or later) is required to run DynamoDB Local" >&2; exit 1; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
( cd "$WORK" && npm pack --silent "amplify-dynamodb-simulator@$VERSION" >/dev/null )
tar -xzf "$WORK"/amplify-dynamodb-simulator-"$VERSION".tgz -C "$WORK" package/emulator
rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
mv "$WORK/package/emulator" "$DEST"
echo "$VERSION" > "$DEST/.version"
echo "DynamoDB Local $VERSION is in $DEST"
