#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for the browser tests (idempotent; instant when present).
# The tests drive /usr/bin/chromium with Playwright's executable_path: no browser is ever downloaded.
set -euo pipefail
# A CJK font too, so that the Chinese pages' screenshots show characters, not boxes.
if [ -x /usr/bin/chromium ] && fc-list :lang=zh | grep -q .; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "ensure-chromium: /usr/bin/chromium is missing and we are not root; browser tests will be skipped" >&2
        exit 0
    fi
else
    SUDO=""
fi
echo "ensure-chromium: installing Debian's chromium and fonts (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core fonts-wqy-zenhei >/dev/null
test -x /usr/bin/chromium
