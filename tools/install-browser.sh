#!/usr/bin/env bash
# Install the system Chromium used by the end-to-end tests (tests/e2e) and the Python
# Playwright client that drives it. No browser is downloaded by Playwright itself: the tests
# launch /usr/bin/chromium via executable_path. Idempotent: each step is skipped when done.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
else
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium chromium-driver
fi

# $PYTHON if given, else the repository's .venv, else python3 on PATH
VENV_PYTHON="$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python"
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$VENV_PYTHON" ]; then PYTHON="$VENV_PYTHON"; else PYTHON=python3; fi
fi
if "$PYTHON" -c "import playwright" 2>/dev/null; then
    echo "playwright (Python client) already installed"
else
    # Only the Python client; never `playwright install` (that downloads browsers).
    "$PYTHON" -m pip install playwright
fi
