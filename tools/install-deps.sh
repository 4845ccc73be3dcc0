#!/bin/bash
# install-deps.sh - installs the Debian packages listed in debian-packages.txt
# (as root, on Debian 12). Skips apt when everything is already installed.
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
pkgs=$(grep -v '^#' "$here/debian-packages.txt" | grep -v '^$' | tr '\n' ' ')
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	# tshark asks whether non-root users may capture; answer no
	echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
	apt-get update -qq
	apt-get install -y -qq $missing
fi
