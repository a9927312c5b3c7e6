#!/usr/bin/env bash
# The real-window check: the built app in a virtual X display, with one
# project and one agent prepared through the CLI; the script waits for the
# window whose title says the agents list is shown ("Shepherd — <project> ·
# 1 agent": the agents view sets it once the list has loaded), takes a
# screenshot of the display and checks it is not blank. The PNG is kept in
# test-output/ (git-ignored).
#
#   scripts/window-check.sh   (expects build/bin/shepherd: scripts/test.sh builds it)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin="$(app_bin)"
[[ -x "$bin" ]] || die "$bin is missing: build the app first (scripts/run.sh or scripts/test.sh)"
out="$ROOT/test-output"
mkdir -p "$out"
png="$out/window.png"
rm -f "$png"
tmp="$(mktemp -d)"
export XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$tmp/project"
chmod 700 "$XDG_RUNTIME_DIR"
# No session bus here: the app must neither use nor start one.
isolate_session_bus "$tmp"

pids=()
cleanup() {
	local rc=$?
	quit_engine "$bin"
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One project with one agent, made through the CLI and a headless engine.
"$bin" serve >"$tmp/serve.log" 2>&1 &
serve=$!
for _ in $(seq 100); do
	[[ -e "$XDG_RUNTIME_DIR/shepherd/engine.json" ]] && break
	sleep 0.1
done
"$bin" add-project "$tmp/project" --name window-check >/dev/null
"$bin" create window-check hello -- sh -c 'echo hello from the window check' >/dev/null
kill -INT "$serve"
wait "$serve" || true

# A display of our own; Xvfb tells which number it took.
exec {fd}<> <(:)
Xvfb -displayfd "$fd" -screen 0 1280x800x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
pids+=($!)
read -r -t 20 -u "$fd" num || die "Xvfb did not start: $(cat "$tmp/xvfb.log")"
export DISPLAY=":$num"

start=$SECONDS
"$bin" >"$out/window-app.log" 2>&1 &
pids=($! "${pids[@]}")
title='Shepherd — window-check · 1 agent'
found=false
for _ in $(seq 120); do
	tree="$(xwininfo -root -tree 2>/dev/null || true)"
	if [[ "$tree" == *"\"$title\""* ]]; then
		found=true
		break
	fi
	kill -0 "${pids[0]}" 2>/dev/null || die "the app exited: $(tail -n 20 "$out/window-app.log")"
	sleep 0.5
done
$found || die "no window titled '$title' within 60 s"
sleep 1 # let the first frame paint
import -window root "$png"
colours="$(identify -format '%k' "$png")"
log "window '$title' shown after $((SECONDS - start))s; screenshot $png has $colours colours"
((colours > 16)) || die "the screenshot is blank ($colours colours)"
