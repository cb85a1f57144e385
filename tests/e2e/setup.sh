#!/usr/bin/env bash
# What `make e2e` needs beyond .venv (which gets Playwright from the `.[e2e]` extra):
#   - Debian's Chromium, installed with apt-get when /usr/bin/chromium is missing (CI runs as
#     root on a fresh machine). Playwright drives it through `executable_path`: no browser is
#     ever downloaded (`playwright install` is never run). chromium-driver comes along for
#     anyone driving the same browser with Selenium.
#   - the Mermaid parser: `npm ci` in tests/e2e from the committed package-lock.json.
# Quiet when all is well; on a failure it prints the failing command's output.
set -euo pipefail
cd "$(dirname "$0")"

log=$(mktemp)
trap 'rm -f "$log"' EXIT

quietly() {
    if ! "$@" >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        echo "e2e setup: '$*' failed" >&2
        return 1
    fi
}

retry() {  # three tries, for the package registries' bad moments
    local n
    for n in 1 2 3; do
        if quietly "$@"; then return 0; fi
        [ "$n" -lt 3 ] && sleep $((n * 5))
    done
    return 1
}

if [ ! -x /usr/bin/chromium ]; then
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "e2e setup: root (or sudo) is needed to apt-get install chromium" >&2; exit 1; }
        sudo=(sudo)
    fi
    echo "e2e setup: installing Debian's chromium and chromium-driver"
    apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
    retry "${apt[@]}" update
    retry "${apt[@]}" install -y --no-install-recommends chromium chromium-driver fonts-liberation
fi
/usr/bin/chromium --version >/dev/null 2>&1 || { echo "e2e setup: /usr/bin/chromium does not start" >&2; exit 1; }

command -v node >/dev/null || { echo "e2e setup: node (20 or newer) is needed for the Mermaid parser" >&2; exit 1; }
if [ ! node_modules/.package-lock.json -nt package-lock.json ]; then
    retry npm ci --no-audit --no-fund --loglevel=error
fi
