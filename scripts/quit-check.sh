#!/usr/bin/env bash
# Quit always quits: the built app under a virtual X display with no session
# bus, quit by each path in turn — Ctrl+Q (the app menu's Quit Shepherd),
# `shepherd quit`, SIGTERM, SIGINT, SIGHUP. Each must end the window and the
# engine it started (shepherd-engine, a process of its own) within 3 s, and
# leave no process behind that the app started (no dbus-daemon, no
# accessibility bus, no web process): every process the app starts inherits
# a marker in its environment, and none may carry it once the app is gone.
# Last, a window killed with SIGKILL leaves its engine supervising.
#
#   scripts/quit-check.sh   (expects build/bin/shepherd: scripts/test.sh builds it)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin="$(app_bin)"
[[ -x "$bin" ]] || die "$bin is missing: build the app first (scripts/run.sh or scripts/test.sh)"
command -v xdotool >/dev/null || die "xdotool is missing: run scripts/setup.sh --test"
out="$ROOT/test-output"
mkdir -p "$out"
tmp="$(mktemp -d)"
export XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_RUNTIME_DIR="$tmp/run" XDG_CONFIG_HOME="$tmp/config"
mkdir -p "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME"
chmod 700 "$XDG_RUNTIME_DIR"
# No session bus at all: the app must not start one.
unset DBUS_SESSION_BUS_ADDRESS NO_AT_BRIDGE
engine_file="$XDG_RUNTIME_DIR/shepherd/engine.json"
mark="shepherd-quit-check-$$-$RANDOM"

pids=()
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	for p in $(marked); do kill -KILL "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# marked lists the processes that carry this run's marker.
marked() {
	local f
	for f in /proc/[0-9]*/environ; do
		if grep -qsF "SHEPHERD_QUIT_CHECK=$mark" "$f" 2>/dev/null; then
			f="${f#/proc/}"
			printf '%s\n' "${f%/environ}"
		fi
	done
}

describe() {
	local p
	for p in "$@"; do
		printf '  pid %s: %s\n' "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null || echo gone)"
	done
}

exec {fd}<> <(:)
Xvfb -displayfd "$fd" -screen 0 1280x800x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
pids+=($!)
read -r -t 20 -u "$fd" num || die "Xvfb did not start: $(cat "$tmp/xvfb.log")"
export DISPLAY=":$num"

# launch starts the app (in a session of its own, as a desktop would) and
# waits for its window and for its engine to answer; it sets app and engine.
app="" engine="" wid=""
launch() {
	rm -f "$engine_file"
	SHEPHERD_QUIT_CHECK="$mark" setsid "$bin" >>"$out/quit-app.log" 2>&1 &
	app=$!
	local i
	for i in $(seq 150); do
		if [[ -s "$engine_file" ]] && "$bin" status >/dev/null 2>&1; then
			wid="$(xdotool search --onlyvisible --name '^Shepherd' 2>/dev/null | head -n 1 || true)"
			[[ -n "$wid" ]] && break
		fi
		kill -0 "$app" 2>/dev/null || die "the app exited at start: $(tail -n 20 "$out/quit-app.log")"
		sleep 0.2
	done
	[[ -n "$wid" ]] || die "no Shepherd window or no engine within 30 s: $(tail -n 20 "$out/quit-app.log")"
	engine="$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$engine_file")"
	[[ -n "$engine" ]] || die "no engine pid in $engine_file"
}

# ended PID...: true once none of them runs (a zombie has ended).
ended() {
	local p st
	for p in "$@"; do
		st="$(ps -o stat= -p "$p" 2>/dev/null || true)"
		[[ -z "$st" || "$st" == Z* ]] || return 1
	done
}

failures=()
# check NAME: after the quit was asked for, the window and the engine end
# within 3 s, and nothing the app started is left.
check() {
	local name="$1" start=$EPOCHREALTIME left
	while ! ended "$app" "$engine"; do
		if (($(awk -v s="$start" -v n="$EPOCHREALTIME" 'BEGIN{print (n-s > 3.0)}'))); then
			failures+=("$name: still running after 3 s")
			log "$name: FAILED, still running after 3 s:"
			describe "$app" "$engine" >&2
			kill -KILL "$app" "$engine" 2>/dev/null || true
			break
		fi
		sleep 0.05
	done
	wait "$app" 2>/dev/null || true
	log "$name: ended after $(awk -v s="$start" -v n="$EPOCHREALTIME" 'BEGIN{printf "%.2f", n-s}') s"
	# What the app started may take a moment to notice it is gone.
	for _ in $(seq 20); do
		left="$(marked)"
		[[ -z "$left" ]] && break
		sleep 0.1
	done
	if [[ -n "$left" ]]; then
		failures+=("$name: processes left behind")
		log "$name: FAILED, processes the app started are still running:"
		# shellcheck disable=SC2086 # one pid per line
		describe $left >&2
		# shellcheck disable=SC2086
		kill -KILL $left 2>/dev/null || true
	fi
}

launch
xdotool windowfocus --sync "$wid"
xdotool key --clearmodifiers ctrl+q
check "Ctrl+Q (Quit Shepherd)"

launch
"$bin" quit >/dev/null
check "shepherd quit"

for sig in TERM INT HUP; do
	launch
	kill -"$sig" "$app"
	check "SIG$sig"
done

# With "stop all agents when Shepherd quits" on, the window's quit stops
# them: the engine it asks to quit applies the preference.
mkdir -p "$XDG_CONFIG_HOME/shepherd" "$tmp/project"
printf '{"stopAgentsOnQuit":true}\n' >"$XDG_CONFIG_HOME/shepherd/prefs.json"
launch
"$bin" add-project "$tmp/project" --name quit-check >/dev/null
"$bin" create quit-check sleeper -- sleep 300 >/dev/null
agent="$("$bin" --json start quit-check sleeper | sed -n 's/.*"pid": *\([0-9][0-9]*\).*/\1/p' | head -n 1)"
[[ -n "$agent" ]] && kill -0 "$agent" 2>/dev/null || die "the agent did not start"
kill -TERM "$app"
check "SIGTERM with stop-on-quit"
if kill -0 "$agent" 2>/dev/null; then
	failures+=("stop-on-quit: the agent (pid $agent) still runs after the quit")
	log "stop-on-quit: FAILED, the agent still runs"
	kill -KILL "$agent" 2>/dev/null || true
fi
rm -f "$XDG_CONFIG_HOME/shepherd/prefs.json"

# A window that crashes never stops supervision: its engine is a process of
# its own, and still answers; `shepherd quit` then ends it.
launch
[[ "$engine" != "$app" ]] || die "the window runs the engine itself (is shepherd-engine beside it?)"
kill -KILL "$app"
wait "$app" 2>/dev/null || true
if ! kill -0 "$engine" 2>/dev/null || ! "$bin" status >/dev/null 2>&1; then
	failures+=("SIGKILL of the window: its engine (pid $engine) went with it")
	log "SIGKILL of the window: FAILED, the engine went with it"
fi
"$bin" quit >/dev/null
check "shepherd quit after the window was killed"

if ((${#failures[@]} > 0)); then
	die "quit check: $(IFS=';'; echo "${failures[*]}")"
fi
log "quit check: every path quit within 3 s and left nothing running"
