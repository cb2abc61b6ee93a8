#!/usr/bin/env bash
# Install the system Chromium used by the end-to-end tests (tests/e2e), driven by the
# Python Playwright client from the test extras. No browser is downloaded by Playwright itself: the tests
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
# The Python Playwright client comes with the test extras (pip install -e '.[test]');
# never run `playwright install`: it downloads browsers.
