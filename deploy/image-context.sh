#!/usr/bin/env bash
# deploy/image-context.sh DIR gathers what the Dockerfile copies into DIR
# (the Dockerfile expects .image at the repository root): a static canvasd
# built from this checkout, the CA bundle of Debian's ca-certificates
# package, passwd and group naming the image's user (canvasd, 65532), and
# the empty data directory that becomes /data.
set -euo pipefail

cd "$(dirname "$0")/.."
out="${1:-.image}"
certs=/etc/ssl/certs/ca-certificates.crt
if [ ! -s "$certs" ]; then
  echo "image-context.sh: $certs is missing: apt-get install ca-certificates" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out/etc/ssl/certs" "$out/data"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out/canvasd" ./cmd/canvasd
cp "$certs" "$out/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\ncanvasd:x:65532:65532:canvasd:/data:/sbin/nologin\n' > "$out/etc/passwd"
printf 'root:x:0:\ncanvasd:x:65532:\n' > "$out/etc/group"
