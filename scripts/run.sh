#!/usr/bin/env bash
# Installs what is missing, builds Shepherd when its sources changed since the
# last build (--rebuild: whatever changed), and runs it until the window is
# closed or Ctrl-C. Without a display the app runs under a virtual one (Xvfb),
# where the command line and the HTTP API still work.
#
#   scripts/run.sh [--rebuild]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rebuild=false
for arg in "$@"; do
	case "$arg" in
	--rebuild) rebuild=true ;;
	*) die "unknown option: $arg (usage: scripts/run.sh [--rebuild])" ;;
	esac
done

"$ROOT/scripts/setup.sh"
if $rebuild; then
	rm -f "$(build_stamp)"
fi
build_app_if_changed

bin="$(app_bin)"
if [[ "$(uname -s)" == Darwin || -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ]]; then
	log "running $bin"
	exec "$bin"
fi

log "no display: running Shepherd under a virtual display (xvfb-run); the window is invisible, but the CLI and the HTTP API work, e.g. build/bin/shepherd ls"
# Ctrl-C reaches the virtual display too, which can end the window before it
# asks its engine (a process of its own) to quit: ask it here as well.
trap 'quit_engine "$bin"' EXIT
trap 'exit 130' INT TERM HUP
# dbus-run-session: a session bus for the app's lifetime (GTK would otherwise
# auto-launch one that outlives it; Wails' single-instance lock needs one).
xvfb-run -a dbus-run-session -- "$bin"
