#!/usr/bin/env bash
# Make sure Debian's Mono C# compiler and runtime are installed for the C# oracle tests
# (tests/oracle/: the seed post's method compiled and run). Idempotent; instant when present.
set -euo pipefail
if command -v mcs >/dev/null 2>&1 && command -v mono >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "ensure-mono: mcs/mono are missing and we are not root; the C# oracle tests will skip (fail under CI=true)" >&2
        exit 0
    fi
else
    SUDO=""
fi
echo "ensure-mono: installing Debian's mono-mcs and mono-runtime (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends mono-mcs mono-runtime >/dev/null
command -v mcs >/dev/null && command -v mono >/dev/null
