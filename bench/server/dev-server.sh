# Sourced by run.sh and mixed.sh: start_dev_server WORK starts
# `corral server --dev` built into WORK on a random loopback port, waits for
# its token and exports CORRAL_TOKEN and CORRAL_SERVER (SERVER_FLAGS, if
# set, are more flags of the server); server_pid is its
# process, stopped (and WORK removed) when the script exits.
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; [ -n "$server_pid" ] && wait "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT

start_dev_server() {
	local dir=$1 port=$(( 20000 + RANDOM % 20000 ))
	# shellcheck disable=SC2086 # SERVER_FLAGS holds several flags
	"$dir/corral" server --dev --db "$dir/corral.db" --listen "127.0.0.1:$port" ${SERVER_FLAGS:-} >"$dir/server.out" 2>"$dir/server.log" &
	server_pid=$!
	for _ in $(seq 100); do
		grep -q '^export CORRAL_TOKEN=' "$dir/server.out" 2>/dev/null && break
		sleep 0.1
	done
	eval "$(grep '^export CORRAL_TOKEN=' "$dir/server.out")"
}
