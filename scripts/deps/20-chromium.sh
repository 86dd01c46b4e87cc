#!/usr/bin/env bash
# Headless Chromium for the browser tests of the dashboard and the HTML
# reports: Debian's package, installed once.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium
