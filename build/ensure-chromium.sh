#!/usr/bin/env bash
# Finds a Chromium-based browser and its chromedriver for the browser tests (it module) and writes their paths to the
# file named by $1, which the tests read. Order: the paths given as chromium=... and chromedriver=... (the build's
# -Dit.chromium=... and -Dit.chromedriver=...),
# then the PATH (chromium, chromium-browser, google-chrome, google-chrome-stable, chrome; chromedriver), then the
# usual install places on Linux and macOS. Where none is found and apt-get exists, installs Debian's chromium and
# chromium-driver (as root, or through sudo without a password). Never skips: otherwise the build stops here naming
# what to install.
set -euo pipefail

out="${1:?usage: ensure-chromium.sh <output file> [chromium=<path>] [chromedriver=<path>]}"
browser=""
driver=""
for given in "${@:2}"; do
  case "$given" in
    chromium=*) browser="${given#chromium=}" ;;
    chromedriver=*) driver="${given#chromedriver=}" ;;
  esac
done

find_browser() {
  local candidate
  for candidate in chromium chromium-browser google-chrome google-chrome-stable chrome; do
    if command -v "$candidate" >/dev/null 2>&1; then command -v "$candidate"; return 0; fi
  done
  for candidate in /usr/bin/chromium /usr/bin/chromium-browser /snap/bin/chromium \
      "/Applications/Chromium.app/Contents/MacOS/Chromium" \
      "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"; do
    if [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
  done
  return 1
}

find_driver() {
  local candidate
  if command -v chromedriver >/dev/null 2>&1; then command -v chromedriver; return 0; fi
  for candidate in /usr/bin/chromedriver /usr/lib/chromium/chromedriver /usr/lib/chromium-browser/chromedriver \
      /snap/bin/chromium.chromedriver /opt/homebrew/bin/chromedriver /usr/local/bin/chromedriver; do
    if [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
  done
  return 1
}

[ -n "$browser" ] || browser="$(find_browser || true)"
[ -n "$driver" ] || driver="$(find_driver || true)"

if [ -z "$browser" ] || [ -z "$driver" ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-chromium: no Chromium-based browser and chromedriver found on the PATH or in the usual places," >&2
    echo "ensure-chromium: and this machine has no apt-get to install them. Install Chromium (or Chrome) and the" >&2
    echo "ensure-chromium: chromedriver of the same version, or name them: -Dit.chromium=/path -Dit.chromedriver=/path" >&2
    exit 1
  fi
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "ensure-chromium: no Chromium and chromedriver found; installing them needs root." >&2
    echo "ensure-chromium: run 'sudo apt-get install -y chromium chromium-driver' (or name yours with" >&2
    echo "ensure-chromium: -Dit.chromium=/path -Dit.chromedriver=/path), then the build again." >&2
    exit 1
  fi
  echo "ensure-chromium: installing Debian's chromium and chromium-driver for the browser tests"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -q
  "${as_root[@]}" apt-get install -y -q --no-install-recommends chromium chromium-driver
  browser="$(find_browser)"
  driver="$(find_driver)"
fi

for tool in "$browser" "$driver"; do
  if [ ! -x "$tool" ]; then
    echo "ensure-chromium: $tool is not an executable file" >&2
    exit 1
  fi
done
mkdir -p "$(dirname "$out")"
printf 'chromium=%s\nchromedriver=%s\n' "$browser" "$driver" > "$out"
echo "ensure-chromium: browser $browser, driver $driver"
