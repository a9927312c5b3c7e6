# Shared helpers for the scripts in this folder. Source it; do not run it.

# The repository root, whatever the caller's working folder.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages the desktop build needs (Wails v2 on WebKitGTK 4.1), and a
# virtual display and a session bus of its own (dbus-run-session, in dbus-bin)
# for machines without them.
BUILD_DEBS=(libgtk-3-dev libwebkit2gtk-4.1-dev pkg-config build-essential xvfb xauth dbus-bin)
# Extra packages for the tests: browser end-to-end tests use the system
# Chromium; the real-window check lists windows (x11-utils) and takes and
# measures a screenshot (imagemagick); dbus-launch (dbus-x11) lets the
# notification test prove that no stray dbus-daemon is started without a
# session bus (without it the library cannot start one, and the test would
# prove nothing); the quit check presses Ctrl+Q in the window (xdotool); the
# CLI's completion scripts are loaded and driven in bash (with
# bash-completion), zsh and fish (about 7 MB).
TEST_DEBS=(chromium x11-utils imagemagick dbus-x11 xdotool bash-completion zsh fish)

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The Wails CLI version must match the library in go.mod: `@latest` resolves to
# an old release that does not build with current Go.
wails_version() {
	(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/wailsapp/wails/v2)
}

# The Wails CLI is installed into GOPATH/bin and always used by its full path,
# so that another wails on PATH cannot be picked up by mistake.
wails_bin() {
	printf '%s/bin/wails\n' "$(go env GOPATH | cut -d: -f1)"
}

# app_bin is the executable wails build makes: inside the .app bundle on macOS.
app_bin() {
	if [[ "$(uname -s)" == Darwin ]]; then
		printf '%s\n' "$ROOT/build/bin/shepherd.app/Contents/MacOS/shepherd"
	else
		printf '%s\n' "$ROOT/build/bin/shepherd"
	fi
}

# build_app builds build/bin/shepherd and, next to it, the shepherd-shim helper
# the engine looks for beside its own executable.
build_app() {
	local wails out
	wails="$(wails_bin)"
	out="$(mktemp)"
	log "building the app (wails build, about a minute)"
	# Quiet on success; the full output only when it fails.
	# -m: no go mod tidy (it would rewrite go.sum in a fresh clone).
	if ! (cd "$ROOT" && "$wails" build -m >"$out" 2>&1); then
		cat "$out" >&2
		rm -f "$out"
		die "wails build failed"
	fi
	rm -f "$out"
	# wails build runs its own npm install when package.json changed, which
	# rewrites package-lock.json; the modules are as current as setup.sh's.
	if [[ -e "$ROOT/frontend/node_modules/.shepherd-installed" ]]; then
		touch "$ROOT/frontend/node_modules/.shepherd-installed"
	fi
	log "building shepherd-shim and shepherd-engine"
	build_shim "$(dirname "$(app_bin)")"
	build_engine "$(dirname "$(app_bin)")"
}

# source_fingerprint prints a hash of what the binaries are built from: the
# contents of every source file (tracked, or new and not ignored) — not the
# tests, docs, scripts or benchmarks, nor the bindings wails build generates
# from the Go code (frontend/wailsjs) — and the Go and Wails versions.
# Content, not times: a checkout that rewrites a file unchanged changes nothing.
source_fingerprint() {
	(
		cd "$ROOT"
		{
			go version
			wails_version
			if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
				git ls-files -co --exclude-standard -z -- . ':!:*.md' ':!:scripts' ':!:bench' ':!:.ci' \
					':!:frontend/e2e' ':!:frontend/wailsjs' ':!:*_test.go' ':!:*.test.ts' ':!:*.test.tsx' ':!:**/testdata/**'
			else
				find app backend frontend build main.go display.go display_bindings.go go.mod go.sum wails.json \
					\( -name node_modules -o -name dist -o -name bin -o -name e2e -o -name wailsjs -o -name testdata \) -prune -o \
					-type f ! -name '*_test.go' ! -name '*.test.ts' ! -name '*.test.tsx' ! -name '*.md' -print0 2>/dev/null
			fi | sort -z | xargs -0 sha256sum 2>/dev/null
		} | sha256sum | cut -d' ' -f1
	)
}

# build_stamp is where the fingerprint of the last build is kept.
build_stamp() { printf '%s\n' "$ROOT/build/bin/.source-fingerprint"; }

# build_app_if_changed builds the app only when its sources changed since the
# last build (or a binary is missing): a relaunch then starts in a moment
# instead of rebuilding for a minute. The fingerprint is taken before the
# build, so a file edited while it runs is built next time.
build_app_if_changed() {
	local want stamp dir
	stamp="$(build_stamp)"
	dir="$(dirname "$(app_bin)")"
	want="$(source_fingerprint)"
	if [[ -x "$(app_bin)" && -x "$dir/shepherd-shim" && -x "$dir/shepherd-engine" && -x "$dir/hosts/linux-amd64/shepherd-engine" &&
		-s "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
		log "build/bin is up to date with the sources: not rebuilding (scripts/run.sh --rebuild forces it)"
		return 0
	fi
	rm -f "$stamp"
	build_app
	# The engines `shepherd host add` installs on other machines, beside the
	# engine that reads them.
	build_host_engines "$dir/hosts"
	mkdir -p "$(dirname "$stamp")"
	printf '%s\n' "$want" >"$stamp"
}

# build_shim DIR builds the shim helper into DIR.
build_shim() {
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$1/shepherd-shim" ./backend/shim/cmd/shepherd-shim)
}

# build_engine DIR builds the headless engine (no cgo: no GTK, no WebKit) into
# DIR; the window starts it, and SHEPHERD_ENGINE points elsewhere at one.
build_engine() {
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$1/shepherd-engine" ./backend/cli/cmd/shepherd-engine)
}

# quit_engine BIN asks the engine of this XDG_RUNTIME_DIR to quit (BIN is a
# shepherd binary), then ends it with SIGTERM if it still runs: a window
# starts its engine in a session of its own, which a test's clean-up of its
# own process group would miss.
quit_engine() {
	local file="${XDG_RUNTIME_DIR:?}/shepherd/engine.json" pid
	[[ -s "$file" ]] || return 0
	pid="$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$file")"
	"$1" quit >/dev/null 2>&1 || true
	[[ -n "$pid" ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
	fi
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# isolate_session_bus DIR keeps a test's app from auto-launching a D-Bus
# session bus: with none, GLib (GTK, WebKit's accessibility) starts one
# through dbus-launch, and that daemon leaves the test's process group and
# outlives it. An address that leads nowhere means "no bus" without that.
isolate_session_bus() {
	export DBUS_SESSION_BUS_ADDRESS="unix:path=$1/no-session-bus" NO_AT_BRIDGE=1
}

# build_host_engines [DIR] builds the engine and the shim that Shepherd
# installs on hosts reached over SSH: static (no cgo), for linux/amd64,
# linux/arm64, darwin/amd64 and darwin/arm64, into DIR/<os>-<arch>/ (default
# build/bin/hosts). VERSION, when set, is the version they report.
build_host_engines() {
	# Stripped (-s -w): a third smaller to copy over SSH.
	local out="${1:-$ROOT/build/bin/hosts}" target goos goarch ldflags="-s -w"
	if [[ -n "${VERSION:-}" ]]; then
		ldflags+=" -X shepherd/backend/cli.Version=$VERSION"
	fi
	for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
		goos="${target%/*}" goarch="${target#*/}"
		log "building the host engine for $goos/$goarch"
		(cd "$ROOT" && CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" go build -trimpath -ldflags "$ldflags" \
			-o "$out/$goos-$goarch/shepherd-engine" ./backend/cli/cmd/shepherd-engine) || die "build shepherd-engine for $target"
		(cd "$ROOT" && CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" go build -trimpath -ldflags "$ldflags" \
			-o "$out/$goos-$goarch/shepherd-shim" ./backend/shim/cmd/shepherd-shim) || die "build shepherd-shim for $target"
	done
}
