#!/usr/bin/env bash
# Installs Debian's Chromium for the console's browser tests
# (command/internal/operator/console) when it is missing. The tests drive it with
# chromedp and fail, never skip, without it.
set -euo pipefail
if [[ -x /usr/bin/chromium ]]; then
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "chromium is missing and this is not root: apt-get install -y chromium" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version
