#!/usr/bin/env bash
# End-to-end browser tests: `wails dev` under a virtual display, with the
# engine's data in a temporary folder, and Playwright (Debian's Chromium)
# driving its browser server on :34115, which calls the real Go bindings.
# `shepherd serve` is started first, with the same XDG folders, so the window
# attaches to it (the tests check that, then stop serve and have the window
# start an engine, the headless shepherd-engine, for the rest). Fails fast when wails dev panics
# (it hangs instead of exiting when GTK cannot start) and always stops wails
# dev's and serve's whole process groups.
#
#   scripts/e2e.sh            (scripts/test.sh runs it; setup.sh --test installs what it needs)
#   scripts/e2e.sh --test-name-pattern 'Stop all'   (extra arguments go to node --test)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out="$ROOT/test-output"
mkdir -p "$out"
tmp="$(mktemp -d)"
devlog="$out/wails-dev.log"
: >"$devlog"
export XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
# No session bus here: the app must neither use nor start one.
isolate_session_bus "$tmp"

build_shim "$ROOT/build/bin"
export SHEPHERD_SHIM="$ROOT/build/bin/shepherd-shim"

# A fake Claude Code CLI on PATH for the Claude preset's test: it writes
# stream-json with a success result, and one line per run (its arguments) to
# $FAKE_CLAUDE_RECORD, which the test reads.
mkdir -p "$tmp/bin"
(cd "$ROOT" && go build -o "$tmp/bin/claude" ./backend/supervisor/testdata/fakeclaude)
export PATH="$tmp/bin:$PATH" FAKE_CLAUDE_MODE=success FAKE_CLAUDE_RECORD="$tmp/fakeclaude.jsonl"
# The same for the Codex preset: JSON events ending in turn.completed (tokens, no cost).
(cd "$ROOT" && go build -o "$tmp/bin/codex" ./backend/supervisor/testdata/fakecodex)
export FAKE_CODEX_MODE=success FAKE_CODEX_RECORD="$tmp/fakecodex.jsonl"

# The headless engine, which is also the CLI: `serve` here, and the one the
# window starts (SHEPHERD_ENGINE) after serve is gone.
build_engine "$tmp/bin"
export SHEPHERD_BIN="$tmp/bin/shepherd-engine" SHEPHERD_ENGINE="$tmp/bin/shepherd-engine"

# A host for the hosts test (frontend/e2e/hosts.mjs): an in-process SSH server
# running what it is asked as this user in a home folder of its own. serve
# reaches it with a key of its own in a home of its own (known_hosts too), so
# nothing of the user's ~/.ssh is read or written; the engine it installs
# there is this build.
(cd "$ROOT" && go build -o "$tmp/bin/shepherd-test-host" ./backend/hosts/hoststest/cmd/shepherd-test-host)
host_engines="$tmp/host-engines"
mkdir -p "$host_engines/$(go env GOOS)-$(go env GOARCH)" "$tmp/serve-home"
cp "$tmp/bin/shepherd-engine" "$SHEPHERD_SHIM" "$host_engines/$(go env GOOS)-$(go env GOARCH)/"
export SHEPHERD_E2E_HOST="$tmp/test-host.json"
host_pid=""

if curl -s -o /dev/null "http://localhost:34115/" 2>/dev/null; then
	die "something already listens on :34115 (another wails dev?)"
fi

dev_pid=""
serve_pid=""
stop_group() {
	kill -TERM -- "-$1" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 -- "-$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$1" 2>/dev/null || true
}
cleanup() {
	local rc=$?
	# serve quits during the tests; if it did not, stop it (its group only).
	[[ -n "$serve_pid" ]] && stop_group "$serve_pid"
	# The test host, and the engine the hosts test started there (it quits it;
	# if it did not, here).
	[[ -n "$host_pid" ]] && stop_group "$host_pid"
	XDG_RUNTIME_DIR="$tmp/test-host/run" quit_engine "$SHEPHERD_BIN"
	# The engine the window started then, in a session of its own.
	quit_engine "$SHEPHERD_BIN"
	if [[ -n "$dev_pid" ]]; then
		# wails dev, Xvfb, the app and vite: the whole session we started.
		kill -TERM -- "-$dev_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 -- "-$dev_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$dev_pid" 2>/dev/null || true
		for p in $(ps -o pid= -s "$dev_pid" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
	fi
	# Agents the tests started and left running (they outlive the app by design).
	while IFS= read -r rec; do
		# No pipe into head: one closed early is SIGPIPE, fatal under pipefail.
		pid="$(sed -n 's/.*"pid": *\([0-9][0-9]*\).*/\1/p' "$rec" || true)"
		pid="${pid%%$'\n'*}"
		[[ -n "$pid" ]] && kill -KILL -- "-$pid" 2>/dev/null || true
	done < <(find "$XDG_DATA_HOME" "$tmp/test-host" -name record.json 2>/dev/null)
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The headless engine first: the window must attach to it.
engine_json="$XDG_RUNTIME_DIR/shepherd/engine.json"
setsid "$tmp/bin/shepherd-test-host" -client-home "$tmp/serve-home" -host-home "$tmp/test-host" \
	-info "$SHEPHERD_E2E_HOST" >"$out/test-host.log" 2>&1 &
host_pid=$!
HOME="$tmp/serve-home" SHEPHERD_HOST_ENGINES="$host_engines" setsid env -u SSH_AUTH_SOCK "$SHEPHERD_BIN" serve >"$out/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do
	[[ -s "$engine_json" ]] && break
	kill -0 "$serve_pid" 2>/dev/null || { cat "$out/serve.log" >&2; die "shepherd serve exited early"; }
	sleep 0.1
done
[[ -s "$engine_json" ]] || die "shepherd serve wrote no $engine_json"
log "shepherd serve running (pid $serve_pid)"

start=$SECONDS
log "starting wails dev under xvfb-run (the first build takes a few minutes)"
# -m / -nosyncgomod: leave go.mod alone; no rebuilds or reloads mid-test.
(cd "$ROOT" && exec setsid xvfb-run -a -s "-screen 0 1280x900x24" "$(wails_bin)" dev \
	-m -nosyncgomod -noreload -nogorebuild -nocolour -loglevel Info >>"$devlog" 2>&1) &
dev_pid=$!

panicked() { grep -q 'panic:' "$devlog"; }
ready=false
for _ in $(seq 600); do
	if panicked; then
		tail -n 40 "$devlog" >&2
		die "wails dev panicked (see $devlog)"
	fi
	if ! kill -0 "$dev_pid" 2>/dev/null; then
		tail -n 40 "$devlog" >&2
		die "wails dev exited early (see $devlog)"
	fi
	# The window attaches to serve (no engine of its own to wait for).
	if curl -sf -o /dev/null "http://localhost:34115/"; then
		ready=true
		break
	fi
	sleep 1
done
$ready || { tail -n 40 "$devlog" >&2; die "wails dev was not ready within 10 minutes"; }
log "wails dev ready ($((SECONDS - start))s)"

start=$SECONDS
(cd "$ROOT/frontend" && SHEPHERD_E2E_URL="http://localhost:34115" SHEPHERD_E2E_OUT="$out" \
	exec node --test --test-reporter=spec "$@" e2e/) &
tests=$!
while kill -0 "$tests" 2>/dev/null; do
	if panicked; then
		kill "$tests" 2>/dev/null || true
		tail -n 40 "$devlog" >&2
		die "wails dev panicked during the tests (see $devlog)"
	fi
	sleep 0.5
done
rc=0
wait "$tests" || rc=$?
log "browser tests: exit $rc ($((SECONDS - start))s)"
exit "$rc"
