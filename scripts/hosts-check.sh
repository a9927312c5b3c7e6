#!/usr/bin/env bash
# Hosts end to end: a second machine on this one — a network namespace joined
# by a veth pair, Debian's sshd in it, a user of its own — reached by a local
# engine over SSH, driven through the CLI as a user would:
#   host add (the unknown key refused with its fingerprint, then accepted),
#   agents started there with --host (their logs, their processes there),
#   the link cut: the host unreachable, its agents untouched, one of them
#   ending meanwhile; the link back: reconnected, and what ended while it was
#   away is told; the host's engine SIGKILLed: started again, said so, its
#   agents taken back; stop through --host ends the agent's whole tree there;
#   the host key changed: refused, and a new add refused too.
# Needs root (namespaces, a user, sshd) and openssh-server (scripts/setup.sh
# --test installs it); where either is missing it says why and is skipped.
#
#   scripts/hosts-check.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

skip() {
	log "hosts check skipped: $*"
	exit 0
}
((EUID == 0)) || skip "it needs root (a network namespace, a user, an sshd)"
[[ -x /usr/sbin/sshd ]] || skip "/usr/sbin/sshd is missing (scripts/setup.sh --test installs openssh-server)"
command -v ip >/dev/null || skip "ip (iproute2) is missing"
command -v ssh-keygen >/dev/null || skip "ssh-keygen is missing"
ns="shp-hosts-$$"
ip netns add "$ns" 2>/dev/null || skip "network namespaces are not possible here (ip netns add failed)"

tmp="$(mktemp -d)"
user="shp-hostcheck"
veth="shph$$"
net_local=10.213.7.1 net_host=10.213.7.2
sshd_pid="" engine_bin="" home=""
bin="$tmp/bin"
# Go's caches stay where they are (they follow HOME otherwise).
GOMODCACHE="$(go env GOMODCACHE)" GOCACHE="$(go env GOCACHE)" GOPATH="$(go env GOPATH)"
export GOMODCACHE GOCACHE GOPATH
export XDG_DATA_HOME="$tmp/local/data" XDG_STATE_HOME="$tmp/local/state" XDG_RUNTIME_DIR="$tmp/local/run" \
	XDG_CONFIG_HOME="$tmp/local/config" HOME="$tmp/local"
unset SSH_AUTH_SOCK

cleanup() {
	local rc=$? p
	if [[ -n "$engine_bin" && -x "$engine_bin" ]]; then quit_engine "$engine_bin" || true; fi
	[[ -n "$sshd_pid" ]] && stop_sshd
	# Everything the host's user runs was started by this check: its engine, shims and agents.
	for p in $(ps -u "$user" -o pid= 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
	ip link del "$veth" 2>/dev/null || true
	ip route del unreachable 10.213.7.0/30 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	if id "$user" >/dev/null 2>&1; then userdel -r "$user" >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
	if ((rc == 0)); then log "hosts check: ok"; else log "hosts check: FAILED"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	printf 'hosts check: %s\n' "$*" >&2
	local f
	for f in "$XDG_STATE_HOME/shepherd/shepherd.log" "$tmp/sshd/log" "$home/.local/state/shepherd/engine-console.log" \
		"$home/.local/state/shepherd/shepherd.log"; do
		[[ -f "$f" ]] || continue
		printf -- '--- %s\n' "$f" >&2
		tail -n 15 "$f" >&2
	done
	exit 1
}

# until SECONDS WHAT CMD... retries CMD every 0.2 s until it succeeds.
until_ok() {
	local limit="$1" what="$2" end
	shift 2
	end=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < end)) || fail "timed out after ${limit}s waiting for: $what"
		sleep 0.2
	done
}

# --- the binaries: the local engine and CLI, and the host's build ------------------
log "building the engine, the shim and the host's engine"
version="hosts-check-$$"
mkdir -p "$bin" "$tmp/engines/linux-$(go env GOARCH)"
for b in shepherd-engine:./backend/cli/cmd/shepherd-engine shepherd-shim:./backend/shim/cmd/shepherd-shim; do
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-X shepherd/backend/cli.Version=$version" \
		-o "$bin/${b%%:*}" "${b#*:}") || fail "build ${b%%:*}"
	cp "$bin/${b%%:*}" "$tmp/engines/linux-$(go env GOARCH)/"
done
engine_bin="$bin/shepherd-engine"
export SHEPHERD_SHIM="$bin/shepherd-shim" SHEPHERD_HOST_ENGINES="$tmp/engines"
shepherd() { "$engine_bin" "$@"; }

# --- the host: a user, a namespace, sshd ---------------------------------------------
if id "$user" >/dev/null 2>&1; then userdel -r "$user" >/dev/null 2>&1 || true; fi
useradd -m -s /bin/sh "$user"
usermod -p '*' "$user" # not locked ("!"): sshd without PAM refuses locked accounts
home="$(getent passwd "$user" | cut -d: -f6)"
uid="$(id -u "$user")"
install -d -o "$user" -m 700 "$home/.ssh" "$home/run"

ip link add "$veth" type veth peer name "${veth}n"
ip link set "${veth}n" netns "$ns"
ip addr add "$net_local/30" dev "$veth"
ip link set "$veth" up
ip netns exec "$ns" ip addr add "$net_host/30" dev "${veth}n"
ip netns exec "$ns" ip link set "${veth}n" up
ip netns exec "$ns" ip link set lo up
# While the link is down nothing may leak through the default route.
ip route add unreachable 10.213.7.0/30 metric 1000

mkdir -p "$tmp/sshd" /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$tmp/sshd/host_key"
cat >"$tmp/sshd/config" <<EOF
ListenAddress $net_host
Port 22
HostKey $tmp/sshd/host_key
PidFile $tmp/sshd/pid
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AllowUsers $user
AllowStreamLocalForwarding yes
X11Forwarding no
Subsystem sftp /usr/lib/openssh/sftp-server
SetEnv XDG_RUNTIME_DIR=$home/run
EOF
start_sshd() {
	ip netns exec "$ns" unshare --uts sh -c "hostname shepherd-host && exec /usr/sbin/sshd -D -e -f '$tmp/sshd/config'" \
		>>"$tmp/sshd/log" 2>&1 &
	sshd_pid=$!
	until_ok 10 "sshd listening" ip netns exec "$ns" sh -c "ss -ltn | grep -q '$net_host:22'"
}
# stop_sshd ends the sshd and the connections it serves (its children).
stop_sshd() {
	local p kids
	kids="$(pgrep -P "$sshd_pid" 2>/dev/null || true)"
	for p in $kids $(for k in $kids; do pgrep -P "$k" 2>/dev/null || true; done); do kill -KILL "$p" 2>/dev/null || true; done
	kill -TERM "$sshd_pid" 2>/dev/null || true
	wait "$sshd_pid" 2>/dev/null || true
	sshd_pid=""
}
start_sshd
host_fp="$(ssh-keygen -lf "$tmp/sshd/host_key.pub" | awk '{print $2}')"

# The local user's key, let in on the host.
mkdir -p "$HOME/.ssh" "$XDG_RUNTIME_DIR"
chmod 700 "$HOME/.ssh" "$XDG_RUNTIME_DIR"
ssh-keygen -q -t ed25519 -N '' -f "$HOME/.ssh/id_ed25519"
install -o "$user" -m 600 "$HOME/.ssh/id_ed25519.pub" "$home/.ssh/authorized_keys"

# --- the local engine --------------------------------------------------------------
log "starting the local engine"
shepherd serve >"$tmp/serve.log" 2>&1 &
until_ok 20 "the local engine" test -s "$XDG_RUNTIME_DIR/shepherd/engine.json"
until_ok 20 "the local engine answering" shepherd projects

url="ssh://$user@$net_host"
# --- host add: an unknown key is refused with its fingerprint, then accepted ---------
log "host add: the unknown key"
if out="$(shepherd host add box "$url" </dev/null 2>&1)"; then fail "host add took an unknown key in silence: $out"; fi
[[ "$out" == *"$host_fp"* ]] || fail "host add did not show the key's fingerprint $host_fp: $out"
[[ ! -s "$HOME/.ssh/known_hosts" ]] || fail "known_hosts was written before the key was accepted"
out="$(shepherd host add box "$url" --accept-key "$host_fp" 2>&1)" || fail "host add --accept-key: $out"
[[ "$out" == *"Added host box"*"connected"* ]] || fail "host add: $out"
grep -q "$(cut -d' ' -f2 "$tmp/sshd/host_key.pub")" "$HOME/.ssh/known_hosts" || fail "the accepted key is not in known_hosts"
out="$(shepherd hosts)"
[[ "$out" == *box*"$url"*connected* ]] || fail "hosts: $out"
# The host's engine listens on a 0600 socket only, as that user.
engine_pid="$(shepherd hosts --json | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' | head -n1)"
[[ -n "$engine_pid" ]] && kill -0 "$engine_pid" || fail "no engine pid on the host: $(shepherd hosts --json)"
[[ "$(ps -o user= -p "$engine_pid" | tr -d ' ')" == "$user" ]] || fail "the host's engine does not run as $user"
sock="$(find "$home/run/shepherd" -maxdepth 1 -type s | head -n1)"
[[ -n "$sock" && "$(stat -c %a "$sock")" == 600 ]] || fail "the host's engine socket is not 0600: $sock"
if ss -ltnp 2>/dev/null | grep -q "pid=$engine_pid,"; then fail "the host's engine listens on TCP"; fi

# --- agents there, through the local CLI --------------------------------------------
log "agents on the host with --host"
install -d -o "$user" "$home/proj"
shepherd --host box add-project "$home/proj" >/dev/null || fail "add-project --host"
if shepherd --host box add-project proj >/dev/null 2>&1; then fail "add-project --host took a relative path"; fi
shepherd --host box create proj ends -- sh -c "echo started-on-\$(hostname); while [ ! -e '$home/stop' ]; do sleep 0.1; done; exit 3" >/dev/null
shepherd --host box create proj stays -- sh -c 'echo hello-from-host; sleep 600 & wait' >/dev/null
# The host's event stream, through the local engine, as it comes.
shepherd --host box events proj -f >"$tmp/events.out" 2>&1 &
events_pid=$!
sleep 1
shepherd --host box start proj ends >/dev/null
shepherd --host box start proj stays >/dev/null
until_ok 20 "the host's events streamed through --host" grep -q stays "$tmp/events.out"
kill "$events_pid" 2>/dev/null || true
until_ok 20 "both agents running there" sh -c "'$engine_bin' --host box ls proj | grep -c running | grep -qx 2"
until_ok 10 "the log of an agent there" sh -c "'$engine_bin' --host box logs proj stays | grep -q hello-from-host"
shepherd --host box logs proj ends | grep -q started-on-shepherd-host || fail "the agent did not run in the host's namespace"
stays_pid="$(shepherd --host box get proj stays --json | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' | head -n1)"
[[ "$(ps -o user= -p "$stays_pid" | tr -d ' ')" == "$user" ]] || fail "the agent does not run as the host's user"
if shepherd ls proj >/dev/null 2>&1; then fail "the host's project is in the local engine"; fi

# --- the link cut: unreachable, its agents untouched; one ends meanwhile ---------------
log "cutting the link"
ip link set "$veth" down
until_ok 60 "the host unreachable" sh -c "'$engine_bin' hosts | grep -q 'unreachable since'"
if out="$(shepherd --host box ls proj 2>&1)"; then fail "an unreachable host answered: $out"; fi
[[ "$out" == *unreachable* ]] || fail "a call to an unreachable host: $out"
touch "$home/stop"
until_ok 20 "the agent ending on the host" sh -c "! pgrep -u '$user' -f 'while \[ ! -e' >/dev/null"
kill -0 "$stays_pid" || fail "the agent that stays was touched while the host was away"
log "the link back"
ip link set "$veth" up
until_ok 90 "the host back" sh -c "'$engine_bin' hosts | grep -q 'box.*connected'"
until_ok 20 "what happened while away" sh -c "'$engine_bin' hosts | grep -q 'While box was away'"
out="$(shepherd hosts)"
printf '%s\n' "$out" >&2
[[ "$out" == *"proj"*"ends: ended"*"exit code 3"* || "$out" == *"ends: ended"*"exit code 3"* ]] || fail "while away: $out"
[[ "$out" != *"stays:"* ]] || fail "while away names the agent that ran on: $out"
shepherd --host box ls proj | grep -q failed || fail "the exit is not in the host's list"

# --- the host's engine killed: started again, said so, its agents taken back ------------
log "SIGKILL to the host's engine"
kill -KILL "$engine_pid"
until_ok 60 "the host's engine started again" sh -c "'$engine_bin' hosts | grep -q 'engine had ended'"
shepherd hosts >&2
new_pid="$(shepherd hosts --json | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' | head -n1)"
[[ "$new_pid" != "$engine_pid" ]] && kill -0 "$new_pid" || fail "no new engine on the host"
kill -0 "$stays_pid" || fail "the host's engine restart lost the agent that stays"
until_ok 20 "the agent taken back by the host's engine" sh -c "'$engine_bin' --host box ls proj | grep -q running"

# --- stop through --host ends the whole tree there --------------------------------------
log "stop through --host"
child="$(pgrep -P "$stays_pid" sleep | head -n1)"
shepherd --host box stop proj stays >/dev/null || fail "stop --host"
until_ok 20 "the agent's tree gone" sh -c "! kill -0 $stays_pid && ! kill -0 ${child:-$stays_pid}"

# --- the host key changed: refused ----------------------------------------------------
log "the host key changed"
stop_sshd
rm -f "$tmp/sshd/host_key" "$tmp/sshd/host_key.pub"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/sshd/host_key"
start_sshd
until_ok 90 "the host refused" sh -c "'$engine_bin' hosts | grep -q 'refused since.*has changed'"
if out="$(shepherd host add box2 "$url" </dev/null 2>&1)"; then fail "a changed key was taken: $out"; fi
[[ "$out" == *"has changed"* ]] || fail "host add with a changed key: $out"
shepherd host rm box >/dev/null || fail "host rm"
[[ "$(shepherd hosts)" == *"No hosts yet"* ]] || fail "hosts after rm: $(shepherd hosts)"
