#!/usr/bin/env bash
# Installs what building and running Shepherd needs, and only what is missing:
# Debian packages, Go modules, the Wails CLI (pinned to go.mod) and the
# frontend's npm packages. Quiet when everything is already there.
#
#   scripts/setup.sh          what the app needs
#   scripts/setup.sh --test   also what the tests need
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

want_test=false
for arg in "$@"; do
	case "$arg" in
	--test) want_test=true ;;
	*) die "unknown option: $arg (usage: scripts/setup.sh [--test])" ;;
	esac
done

# --- tools we do not install ourselves -------------------------------------
command -v go >/dev/null || die "Go is not installed (see go.mod for the version)"
command -v node >/dev/null || die "Node.js is not installed (20.19 or newer is needed)"
command -v npm >/dev/null || die "npm is not installed"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' ||
	die "Node.js $(node --version) is too old: the frontend's Vite needs 20.19 or newer"

# --- system packages -----------------------------------------------------------
if [[ "$(uname -s)" == Darwin ]]; then
	# Wails on macOS needs only the Xcode command line tools.
	xcode-select -p >/dev/null 2>&1 || die "install the Xcode command line tools: xcode-select --install"
elif ! command -v dpkg-query >/dev/null; then
	log "not a Debian system: make sure the equivalents of ${BUILD_DEBS[*]} are installed"
else
	debs=("${BUILD_DEBS[@]}")
	if $want_test; then
		debs+=("${TEST_DEBS[@]}")
	fi
	missing=()
	for p in "${debs[@]}"; do
		status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
		if [[ "$status" != *"install ok installed"* ]]; then
			missing+=("$p")
		fi
	done
	if ((${#missing[@]} > 0)); then
		sudo=""
		if ((EUID != 0)); then
			command -v sudo >/dev/null || die "missing packages ${missing[*]}: run as root or install sudo"
			sudo=sudo
		fi
		log "installing Debian packages: ${missing[*]}"
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
fi

# --- sshd for the hosts check (scripts/hosts-check.sh) ------------------------
# Debian's openssh-server, installed without starting a system sshd: the check
# runs its own, in a network namespace, with its own config and keys.
if $want_test && command -v dpkg-query >/dev/null &&
	[[ "$(dpkg-query -W -f='${Status}' openssh-server 2>/dev/null || true)" != *"install ok installed"* ]]; then
	if ((EUID != 0)); then
		log "openssh-server is not installed (the hosts check needs it and root): skipped"
	else
		log "installing openssh-server (not started: the hosts check runs its own sshd)"
		mkdir -p /etc/ssh
		touch /etc/ssh/sshd_not_to_be_run
		placed_policy=false
		if [[ ! -e /usr/sbin/policy-rc.d ]]; then
			printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
			chmod 755 /usr/sbin/policy-rc.d
			placed_policy=true
		fi
		env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null 2>&1 ||
			log "openssh-server did not install: the hosts check will be skipped"
		if $placed_policy; then rm -f /usr/sbin/policy-rc.d; fi
	fi
fi

# --- Go modules --------------------------------------------------------------
(cd "$ROOT" && go mod download)

# --- Wails CLI, the version go.mod names ---------------------------------------
want="$(wails_version)"
wails="$(wails_bin)"
have=""
if [[ -x "$wails" ]]; then
	# All of its output first, then the first line: `wails version` goes on
	# writing a sponsor banner, and a pipe into head closed early would end it
	# with SIGPIPE (exit 141, fatal under pipefail).
	have="$("$wails" version 2>/dev/null || true)"
	have="${have%%$'\n'*}"
	have="${have//[[:space:]]/}"
fi
if [[ "$have" != "$want" ]]; then
	log "installing the Wails CLI $want"
	GOBIN="$(dirname "$wails")" go install "github.com/wailsapp/wails/v2/cmd/wails@$want"
fi

# --- frontend packages ---------------------------------------------------------
# npm install, not npm ci: ci refuses some registries' lockfiles.
fe="$ROOT/frontend"
stamp="$fe/node_modules/.shepherd-installed"
if [[ ! -e "$stamp" || "$fe/package.json" -nt "$stamp" || "$fe/package-lock.json" -nt "$stamp" ]]; then
	log "installing frontend packages (npm install)"
	(cd "$fe" && npm install --no-audit --no-fund --loglevel=error)
	touch "$stamp"
fi
