#!/usr/bin/env bash
# Headless Chromium for the status-page browser test (it module). Installs Debian's chromium and chromium-driver
# when /usr/bin/chromium is missing: as root directly, otherwise through sudo. Never skips: without a browser and
# without a way to install one, the build stops here and says what to install.
set -euo pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: /usr/bin/chromium is missing and this is not a Debian/Ubuntu machine (no apt-get)." >&2
  echo "ensure-chromium: install Chromium so that /usr/bin/chromium exists, then run the build again." >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "ensure-chromium: /usr/bin/chromium is missing; installing it needs root." >&2
  echo "ensure-chromium: run 'sudo apt-get install -y chromium chromium-driver', then the build again." >&2
  exit 1
fi
echo "ensure-chromium: installing Debian's chromium and chromium-driver for the browser test"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends chromium chromium-driver
test -x /usr/bin/chromium
