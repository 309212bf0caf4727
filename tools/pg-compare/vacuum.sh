#!/usr/bin/env bash
# vacuum.sh — the experiment of `hotset bench vacuum`, run on a real
# PostgreSQL 15 so the docs can set the two side by side: a pgbench table 5x
# shared_buffers, a fraction of its rows updated, then VACUUM beside select-only
# clients (pgbench -S), per cost delay and foreground mode, one JSON line per
# cell with the same fields hotset prints (null where PostgreSQL cannot tell).
#
# The cluster is a throwaway one (initdb in a temporary directory, reachable
# only through its own unix socket), stopped and removed on exit. Run as root,
# the server and clients run as an unprivileged user (initdb refuses root).
# tools/pg-compare/README.md explains the fields and what PostgreSQL hides.
set -euo pipefail

prog=vacuum.sh
die() {
	echo "$prog: $*" >&2
	exit 1
}
say() { echo "$prog: $*" >&2; }

usage() {
	cat <<'EOF'
usage: vacuum.sh [options]
  --shared-buffers SIZE  the server's shared_buffers (default 128MB; kB, MB, GB)
  --scale N              pgbench scale (default: pgbench_accounts ~5x shared_buffers,
                         50 for 128MB; one unit is 100,000 rows, 13.4 MB)
  --update-fraction F    rows updated before each plain VACUUM (default 0.02)
  --cost-delay LIST      vacuum_cost_delay values in ms (default 0,2,10)
  --fg LIST              foreground modes, unpaced and/or paced (default unpaced,paced);
                         paced = pgbench -R at half the unpaced tps measured at the start
  --clients N            pgbench -S clients, one thread each (default 2)
  --seconds S            length of each foreground-alone measurement (default 10)
  --freeze-fraction F    rows updated before the VACUUM FREEZE cell (default 0.005)
  --no-freeze            skip the VACUUM FREEZE cell
  --quick                smoke run: 16MB shared_buffers, scale 6, 2 s phases, delays 0,2
                         (explicit options still win)
  --json                 print only the JSON lines (no table at the end)
  --pg-bin DIR           PostgreSQL 15 binaries (default /usr/lib/postgresql/15/bin)
  --user NAME            when run as root, run the server and clients as NAME
                         (default postgres)
  --port N               the server's port, which only names its socket (default 5497)
  --dir DIR              where the temporary cluster goes (default $TMPDIR or /tmp);
                         it needs ~1.5 GB of data plus the WAL at the defaults
EOF
}

pg_bin=/usr/lib/postgresql/15/bin
shared_buffers="" scale="" seconds="" cost_delays=""
fg_modes=unpaced,paced
update_fraction=0.02 freeze_fraction=0.005 freeze=1
clients=2 json_only=0 quick=0 run_user=postgres port=5497
parent=${TMPDIR:-/tmp}

need_value() { [ "$1" -ge 2 ] || die "$2 needs a value (see --help)"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--shared-buffers) need_value $# "$1"; shared_buffers=$2; shift 2 ;;
	--scale) need_value $# "$1"; scale=$2; shift 2 ;;
	--update-fraction) need_value $# "$1"; update_fraction=$2; shift 2 ;;
	--cost-delay) need_value $# "$1"; cost_delays=$2; shift 2 ;;
	--fg) need_value $# "$1"; fg_modes=$2; shift 2 ;;
	--clients) need_value $# "$1"; clients=$2; shift 2 ;;
	--seconds) need_value $# "$1"; seconds=$2; shift 2 ;;
	--freeze-fraction) need_value $# "$1"; freeze_fraction=$2; shift 2 ;;
	--no-freeze) freeze=0; shift ;;
	--quick) quick=1; shift ;;
	--json) json_only=1; shift ;;
	--pg-bin) need_value $# "$1"; pg_bin=$2; shift 2 ;;
	--user) need_value $# "$1"; run_user=$2; shift 2 ;;
	--port) need_value $# "$1"; port=$2; shift 2 ;;
	--dir) need_value $# "$1"; parent=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
done

# --quick only fills what the command line left unset.
if [ "$quick" = 1 ]; then
	: "${shared_buffers:=16MB}" "${scale:=6}" "${seconds:=2}" "${cost_delays:=0,2}"
fi
: "${shared_buffers:=128MB}" "${seconds:=10}" "${cost_delays:=0,2,10}"

# --- checks, before anything is created -------------------------------------

for b in initdb pg_ctl postgres psql pgbench createdb; do
	[ -x "$pg_bin/$b" ] || die "PostgreSQL 15 not found ($pg_bin/$b is missing): install the postgresql-15 package (Debian/Ubuntu: apt-get install postgresql-15), or give --pg-bin DIR"
done
pg_version=$("$pg_bin/postgres" --version)
case "$pg_version" in
*" 15."*) ;;
*) die "$pg_bin/postgres is '$pg_version', not PostgreSQL 15: the stats views read here (pg_stat_bgwriter's backend writes) and the 256 KiB vacuum ring are 15's" ;;
esac
command -v python3 >/dev/null || die "python3 not found: it does the arithmetic on pgbench's logs"

is_number() { [[ "$1" =~ ^[0-9]+([.][0-9]+)?$ ]]; }
is_number "$update_fraction" || die "--update-fraction wants a number, got '$update_fraction'"
is_number "$freeze_fraction" || die "--freeze-fraction wants a number, got '$freeze_fraction'"
is_number "$seconds" || die "--seconds wants a number, got '$seconds'"
[[ "$clients" =~ ^[1-9][0-9]*$ ]] || die "--clients wants a positive integer, got '$clients'"
[[ "$port" =~ ^[1-9][0-9]*$ ]] || die "--port wants a port number, got '$port'"
IFS=, read -r -a delay_list <<<"$cost_delays"
[ ${#delay_list[@]} -gt 0 ] || die "--cost-delay wants a list such as 0,2,10"
for d in "${delay_list[@]}"; do
	is_number "$d" || die "--cost-delay: '$d' is not a delay in ms"
done
IFS=, read -r -a fg_list <<<"$fg_modes"
[ ${#fg_list[@]} -gt 0 ] || die "--fg wants unpaced, paced or both"
for m in "${fg_list[@]}"; do
	[ "$m" = unpaced ] || [ "$m" = paced ] || die "--fg: '$m' is neither unpaced nor paced"
done

# shared_buffers in bytes, for the default scale.
[[ "$shared_buffers" =~ ^([0-9]+)(kB|MB|GB)$ ]] ||
	die "--shared-buffers wants a size like 128MB (kB, MB or GB), got '$shared_buffers'"
case "${BASH_REMATCH[2]}" in
kB) sb_bytes=$((BASH_REMATCH[1] * 1024)) ;;
MB) sb_bytes=$((BASH_REMATCH[1] * 1024 * 1024)) ;;
GB) sb_bytes=$((BASH_REMATCH[1] * 1024 * 1024 * 1024)) ;;
esac
# One pgbench scale unit is 1,640 pages of pgbench_accounts (13,434,880 bytes).
scale_unit=13434880
: "${scale:=$(((5 * sb_bytes + scale_unit - 1) / scale_unit))}"
[[ "$scale" =~ ^[1-9][0-9]*$ ]] || die "--scale wants a positive integer, got '$scale'"

if [ "$(id -u)" = 0 ]; then
	id -u "$run_user" >/dev/null 2>&1 ||
		die "run as root, the server must run as an unprivileged user, and '$run_user' does not exist (give --user NAME)"
	[ "$(id -u "$run_user")" != 0 ] || die "--user must not be root: initdb refuses to run as root"
fi

# --- the throwaway cluster ---------------------------------------------------

tmp=$(mktemp -d -p "$parent" pg-compare-vacuum.XXXXXX)
data=$tmp/data
sock=$tmp/run
server_started=0
fg_pid=""

cleanup() {
	local rc=$?
	set +e
	if [ "$server_started" = 1 ]; then
		# immediate: the cluster is thrown away, a shutdown checkpoint would
		# only write pages nobody reads again. Stopping the server also ends
		# any pgbench still running, whose connections it drops.
		as_pg "$pg_bin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1
	fi
	[ -z "$fg_pid" ] || wait "$fg_pid" 2>/dev/null
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Every server and client command goes through as_pg, which runs it as the
# unprivileged user when the script runs as root, in the temporary directory
# (the caller's may not be readable by that user) and with the connection
# settings of the private cluster.
if [ "$(id -u)" = 0 ]; then
	chown "$run_user" "$tmp"
	as_pg() {
		(cd "$tmp" && runuser -u "$run_user" -- env PGHOST="$sock" PGPORT="$port" \
			PGUSER=postgres PGDATABASE=bench "$@")
	}
else
	as_pg() {
		(cd "$tmp" && env PGHOST="$sock" PGPORT="$port" PGUSER=postgres PGDATABASE=bench "$@")
	}
fi
sql() { as_pg "$pg_bin/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }

as_pg mkdir "$sock" "$tmp/logs"
as_pg "$pg_bin/initdb" -D "$data" -A trust -U postgres -N >"$tmp/initdb.log" 2>&1 ||
	die "initdb failed: $(tail -n 5 "$tmp/initdb.log")"
# max_wal_size and checkpoint_timeout keep the server from starting a
# checkpoint of its own in the middle of a cell (one vacuum here writes about
# as much WAL as the table): the only checkpoints are the script's, before
# each cell, so every cell starts from the same clean state.
cat >>"$data/postgresql.conf" <<EOF

# tools/pg-compare/vacuum.sh
listen_addresses = ''
port = $port
unix_socket_directories = '$sock'
shared_buffers = $shared_buffers
fsync = on
autovacuum = off
track_io_timing = on
track_wal_io_timing = on
max_wal_size = 8GB
checkpoint_timeout = 1h
EOF
as_pg "$pg_bin/pg_ctl" -D "$data" -l "$tmp/server.log" -w start >/dev/null 2>&1 ||
	die "the server did not start: $(tail -n 5 "$tmp/server.log")"
server_started=1

# --- arithmetic on pgbench logs and the cells' figures -----------------------

read -r -d '' py <<'EOF' || true
import json, math, re, sys

def window(t0, t1, files):
    # pgbench -l lines: client_id transaction_no latency_us script_no
    # epoch_s epoch_us [schedule_lag_us]; the epoch is when the transaction
    # ended. Only transactions ending inside [t0, t1] count. Paced (-R)
    # latencies count from the scheduled start; less the schedule lag, they
    # are the transaction's own time (service).
    lat, service = [], []
    for path in files:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 6 or p[2] == "skipped":
                    continue
                end = int(p[4]) + int(p[5]) / 1e6
                if t0 <= end <= t1:
                    lat.append(int(p[2]))
                    service.append(int(p[2]) - (int(p[6]) if len(p) > 6 else 0))
    return len(lat), len(lat) / (t1 - t0), p99(lat), p99(service)

def p99(values):
    values.sort()
    n = len(values)
    return values[max(0, math.ceil(0.99 * n) - 1)] if n else None

def stats(text):
    keys = ("blks_hit blks_read wal_records wal_fpi wal_bytes wal_sync "
            "wal_sync_time buffers_backend buffers_clean buffers_checkpoint").split()
    return dict(zip(keys, (float(v) for v in text.split("|"))))

def delta(a, b):
    return {k: b[k] - a[k] for k in a}

def verbose(path):
    text = open(path).read()
    def grab(pattern):
        m = re.search(pattern, text)
        if not m:
            sys.exit("vacuum.sh: VACUUM VERBOSE output lacks /%s/ (in %s)" % (pattern, path))
        return [int(g) for g in m.groups()]
    scanned, = grab(r"pages: \d+ removed, \d+ remain, (\d+) scanned")
    hits, misses, dirtied = grab(r"buffer usage: (\d+) hits, (\d+) misses, (\d+) dirtied")
    records, fpi, wbytes = grab(r"WAL usage: (\d+) records, (\d+) full page images, (\d+) bytes")
    return dict(scanned=scanned, hits=hits, misses=misses, dirtied=dirtied,
                records=records, fpi=fpi, bytes=wbytes)

def ratio(num, den):
    return num / den if den else None

def rnd(x, places):
    return None if x is None else round(x, places)

def cell(a):
    fg_files = lambda k: a[k].split(",")
    b_n, b_tps, b_p99, b_service = window(float(a["base_t0"]), float(a["base_t1"]), fg_files("base_logs"))
    v_t0, v_t1 = float(a["vac_t0"]), float(a["vac_t1"])
    d_n, d_tps, d_p99, d_service = window(v_t0, v_t1, fg_files("vac_logs"))
    base = delta(stats(a["base_before"]), stats(a["base_after"]))
    dur = delta(stats(a["vac_before"]), stats(a["vac_after"]))
    v = verbose(a["verbose"])
    secs = v_t1 - v_t0
    delay_ms = float(a["delay"])
    delay_ms = int(delay_ms) if delay_ms.is_integer() else delay_ms
    # Backends' writes of shared buffers: the vacuum's ring writes, plus any
    # dirty victim the select clients evicted.
    written = int(dur["buffers_backend"])
    syncs = int(dur["wal_sync"])
    fg_hit = dur["blks_hit"] - v["hits"]
    fg_read = dur["blks_read"] - v["misses"]
    row = {
        "system": "postgresql-15",
        "fg": a["fg"],
        "ring": "256KiB",
        "ring_buffers_end": 32,
        "cost_delay_ms": delay_ms,
        "throttle": "off",
        "freeze": a["freeze"] == "1",
        "vacuum_seconds": rnd(secs, 3),
        "pages_scanned": v["scanned"],
        "pages_dirtied": v["dirtied"],
        "pages_written": written,
        "ring_recycles": None,
        "wal_flushes_forced": None,
        "wal_syncs": syncs,
        "flushes_per_recycle": None,
        "syncs_per_page_written": rnd(ratio(syncs, written), 4),
        "fg_tps_baseline": rnd(b_tps, 1),
        "fg_tps_during": rnd(d_tps, 1),
        "fg_tps_loss": rnd(1 - d_tps / b_tps, 4) if b_tps else None,
        "fg_p99_us_baseline": b_p99,
        "fg_p99_us_during": d_p99,
        "fg_hit_ratio_during": rnd(ratio(fg_hit, fg_hit + fg_read), 4),
        # PostgreSQL-only figures.
        "pg_rows_updated": int(a["rows_updated"]),
        "pg_fg_rate": int(a["rate"]) if a["fg"] == "paced" else None,
        "pg_fg_p99_us_service_baseline": b_service,
        "pg_fg_p99_us_service_during": d_service,
        "pg_fg_hit_ratio_baseline": rnd(ratio(base["blks_hit"], base["blks_hit"] + base["blks_read"]), 4),
        "pg_hit_ratio_during_with_vacuum": rnd(ratio(dur["blks_hit"], dur["blks_hit"] + dur["blks_read"]), 4),
        "pg_vacuum_hits": v["hits"],
        "pg_vacuum_misses": v["misses"],
        "pg_wal_records": v["records"],
        "pg_wal_fpi": v["fpi"],
        "pg_wal_bytes": v["bytes"],
        "pg_wal_sync_seconds": rnd(dur["wal_sync_time"] / 1000, 3),
        "pg_wal_sync_share": rnd(ratio(dur["wal_sync_time"] / 1000, secs), 4),
        "pg_wal_syncs_baseline": int(base["wal_sync"]),
        # WAL records written beside the vacuum's own: mostly the clients
        # pruning the pages they read.
        "pg_fg_wal_records": int(dur["wal_records"]) - v["records"],
        "pg_writes_bgwriter_checkpointer": int(dur["buffers_clean"] + dur["buffers_checkpoint"]),
    }
    print(json.dumps(row, separators=(",", ":")))

def table(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    def f(x, fmt):
        return "–" if x is None else fmt.format(x)
    print("| fg | cost delay | freeze | vacuum s | scanned | dirtied | written | WAL syncs "
          "| syncs/page | sync share | tps alone | tps during | loss | p99 µs alone | p99 µs during "
          "| service p99 µs alone | during | fg hit |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %s ms | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["fg"], f(r["cost_delay_ms"], "{:g}"), "yes" if r["freeze"] else "no",
            f(r["vacuum_seconds"], "{:.2f}"), f(r["pages_scanned"], "{:,}"),
            f(r["pages_dirtied"], "{:,}"), f(r["pages_written"], "{:,}"),
            f(r["wal_syncs"], "{:,}"), f(r["syncs_per_page_written"], "{:.4f}"),
            f(r["pg_wal_sync_share"], "{:.1%}"),
            f(r["fg_tps_baseline"], "{:,.0f}"), f(r["fg_tps_during"], "{:,.0f}"),
            f(r["fg_tps_loss"], "{:.1%}"), f(r["fg_p99_us_baseline"], "{:,}"),
            f(r["fg_p99_us_during"], "{:,}"), f(r["pg_fg_p99_us_service_baseline"], "{:,}"),
            f(r["pg_fg_p99_us_service_during"], "{:,}"), f(r["fg_hit_ratio_during"], "{:.2%}")))

if sys.argv[1] == "window":
    n, tps, lat99, _ = window(float(sys.argv[2]), float(sys.argv[3]), sys.argv[4:])
    print("%d %.1f %s" % (n, tps, lat99))
elif sys.argv[1] == "cell":
    cell(dict(kv.split("=", 1) for kv in sys.argv[2:]))
elif sys.argv[1] == "table":
    table(sys.argv[2])
EOF

now() { date +%s.%N; }

# The counters a cell reads, as one |-separated line. PostgreSQL 15 publishes
# the backends' buffer writes (counted by the checkpointer as it absorbs their
# sync requests) and the WAL writer's WAL counters only when those processes
# next wake; a configuration reload wakes them, and half a second lets them
# run, outside any measured window.
snapshot() {
	sql -c "select pg_reload_conf()" >/dev/null
	sleep 0.5
	sql -c "select d.blks_hit, d.blks_read, w.wal_records, w.wal_fpi, w.wal_bytes, w.wal_sync,
	               w.wal_sync_time, b.buffers_backend, b.buffers_clean, b.buffers_checkpoint
	        from pg_stat_database d, pg_stat_wal w, pg_stat_bgwriter b where d.datname = 'bench'"
}

# fg_start MODE NAME: the select-only clients in the background, their
# per-transaction log under logs/NAME; returns once all are connected.
fg_start() {
	local mode=$1 name=$2
	local args=(-n -S -c "$clients" -j "$clients" -T 86400 -l --log-prefix="$tmp/logs/$name")
	[ "$mode" = unpaced ] || args+=(-R "$pace_rate")
	as_pg "$pg_bin/pgbench" "${args[@]}" >"$tmp/logs/$name.out" 2>&1 &
	fg_pid=$!
	local tries=0
	until [ "$(sql -c "select count(*) from pg_stat_activity where application_name = 'pgbench'")" -ge "$clients" ]; do
		kill -0 "$fg_pid" 2>/dev/null || die "pgbench stopped early: $(tail -n 5 "$tmp/logs/$name.out")"
		tries=$((tries + 1))
		[ "$tries" -lt 600 ] || die "pgbench's clients did not connect within 30 s"
		sleep 0.05
	done
}

# fg_stop NAME: ends the clients by terminating their backends, so each stops
# at once and pgbench still closes its logs (a signal to pgbench would lose
# their buffered tail); pgbench then exits with status 2, clients aborted.
fg_stop() {
	local name=$1
	kill -0 "$fg_pid" 2>/dev/null || die "pgbench stopped before the end of the window: $(tail -n 5 "$tmp/logs/$name.out")"
	sql -c "select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = 'pgbench'" >/dev/null
	wait "$fg_pid" || true
	fg_pid=""
}

fg_logs() {
	local files=("$tmp/logs/$1".[0-9]*)
	[ -e "${files[0]}" ] || die "pgbench wrote no log for $1"
	(IFS=,; echo "${files[*]}")
}

results=$tmp/results.jsonl
cell_no=0

# run_cell MODE DELAY FREEZE FRACTION
run_cell() {
	local mode=$1 delay=$2 frz=$3 frac=$4
	cell_no=$((cell_no + 1))
	local name=cell$cell_no opts="VERBOSE, PROCESS_TOAST false"
	[ "$frz" = 0 ] || opts="$opts, FREEZE"
	say "cell $cell_no: fg $mode, cost delay $delay ms, freeze $frz, updating $frac of the rows"

	# The foreground alone, measured before the update: PostgreSQL's readers
	# prune a full heap page with dead versions when they read it
	# (heap_page_prune_opt), and right after a checkpoint each prune also
	# logs the page's full image, so clients measured after the update would
	# be timed doing the vacuum's work — and would leave the vacuum little of
	# it. The checkpoint writes what the previous cell's vacuum dirtied.
	sql -c checkpoint
	local base_before base_after bt0 bt1
	base_before=$(snapshot)
	fg_start "$mode" "$name-alone"
	bt0=$(now)
	sleep "$seconds"
	bt1=$(now)
	fg_stop "$name-alone"
	base_after=$(snapshot)

	# Each update leaves a dead version for the vacuum; the rows are picked by
	# a seeded random(), so each cell's set is fixed. The checkpoint then
	# starts the vacuum with no dirty pages.
	local rows
	rows=$(sql -c "select setseed($cell_no / 100.0)" -c "with u as (update pgbench_accounts
		set abalance = abalance + 1 where random() < $frac returning 1) select count(*) from u" | tail -n 1)
	sql -c checkpoint

	# The same clients beside the vacuum, timed by the server's clock in the
	# vacuum's own session.
	local vac_before vac_after vac_times
	vac_before=$(snapshot)
	fg_start "$mode" "$name-vacuum"
	vac_times=$(sql -c "set vacuum_cost_delay = $delay" -c "select extract(epoch from clock_timestamp())" \
		-c "vacuum ($opts) pgbench_accounts" -c "select extract(epoch from clock_timestamp())" \
		2>"$tmp/logs/$name.verbose") || die "VACUUM failed: $(tail -n 3 "$tmp/logs/$name.verbose")"
	fg_stop "$name-vacuum"
	vac_after=$(snapshot)

	python3 -c "$py" cell fg="$mode" rate="$pace_rate" delay="$delay" freeze="$frz" rows_updated="$rows" \
		base_t0="$bt0" base_t1="$bt1" base_logs="$(fg_logs "$name-alone")" \
		vac_t0="$(sed -n 1p <<<"$vac_times")" vac_t1="$(sed -n 2p <<<"$vac_times")" \
		vac_logs="$(fg_logs "$name-vacuum")" verbose="$tmp/logs/$name.verbose" \
		base_before="$base_before" base_after="$base_after" \
		vac_before="$vac_before" vac_after="$vac_after" | tee -a "$results"
}

# --- the run -----------------------------------------------------------------

say "PostgreSQL: $pg_version; cluster in $tmp; shared_buffers $shared_buffers, scale $scale"
as_pg "$pg_bin/createdb" bench
# Generated on the server (G) rather than copied in (g): pgbench 15's COPY
# loads the rows already frozen, and then VACUUM FREEZE would have nothing
# to do; v vacuums once, setting hint bits and the visibility map, p adds
# the primary keys.
as_pg "$pg_bin/pgbench" -i -I dtGvp -s "$scale" >"$tmp/load.log" 2>&1 ||
	die "pgbench -i failed: $(tail -n 5 "$tmp/load.log")"
sql -c checkpoint
table_pages=$(sql -c "select pg_relation_size('pgbench_accounts') / 8192 || ' pages, index ' || pg_relation_size('pgbench_accounts_pkey') / 8192 || ' pages'")
say "pgbench_accounts: $table_pages"

# The paced rate: half what the unpaced clients do at the start.
pace_rate=0
fg_start unpaced start
st0=$(now)
sleep "$seconds"
st1=$(now)
fg_stop start
read -r _ start_tps _ <<<"$(python3 -c "$py" window "$st0" "$st1" "$tmp"/logs/start.[0-9]*)"
pace_rate=$(python3 -c "import sys; print(max(1, round(float(sys.argv[1]) / 2)))" "$start_tps")
say "unpaced clients alone at the start: $start_tps tps; paced rate $pace_rate tps"

for mode in "${fg_list[@]}"; do
	for delay in "${delay_list[@]}"; do
		run_cell "$mode" "$delay" 0 "$update_fraction"
	done
done
if [ "$freeze" = 1 ]; then
	run_cell "${fg_list[0]}" 0 1 "$freeze_fraction"
fi

if [ "$json_only" = 0 ]; then
	echo
	echo "shared_buffers $shared_buffers, scale $scale ($table_pages), $clients clients, paced rate $pace_rate tps"
	echo
	python3 -c "$py" table "$results"
fi
