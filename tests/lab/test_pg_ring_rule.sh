#!/usr/bin/env bash
#
# tests/test_pg_ring_rule.sh — PostgreSQL's ring rule against PostgreSQL.
#
# tests/data/pg15-pgbench-seqscan.csv.zst is a real PostgreSQL 15 trace
# (shared_buffers 2048, three pgbench -S clients beside 30 sequential scans
# of a 7,648-page table, which PostgreSQL reads through its 32-buffer
# bulkread ring); its found column says what the server found. Checked:
#   - clock-sweep at 2048 without a ring model misses far more than the
#     server did (more than 5 % over), with --ring-rule pg within 0.5 % of
#     the server's own misses, access by access nearly all alike;
#   - the ordered replay through the real pool, with the pool's own rings,
#     misses exactly where the simulator does, and the replay with a thread
#     per pid, as the server ran, stays within 0.5 % of the server too.
#
# Usage: test_pg_ring_rule.sh PATH/TO/hotset REPO_ROOT
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_pg_ring_rule.sh PATH/TO/hotset REPO_ROOT}
root=${2:?usage: test_pg_ring_rule.sh PATH/TO/hotset REPO_ROOT}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup pg-ring-rule
export TMPDIR=$scratch

trace=$root/tests/data/pg15-pgbench-seqscan.csv.zst
server=217073 # the trace's accesses whose found column is false

field() { json_line_field "$out" 1 "$1"; } # a field of the first JSON line
within() { # got want permille: |got - want| <= want * permille / 1000
  local d=$(($1 - $2))
  ((d < 0)) && d=$((-d))
  ((d * 1000 <= $2 * $3))
}

run trace-stats "$trace" --json
if [[ $status -eq 0 && $(grep -o '"server_misses":[0-9]*' "$out" | cut -d: -f2) == "$server" ]]; then ok
else bad "trace-stats: the trace's found column does not say $server misses: $(head -c 300 "$out")"; fi

run sim --trace "$trace" --policy clock-sweep --size 2048 --ignore-size --json
expect_status 0 "sim without the ring rule"
plain=$(field misses)
if ((plain > server + server / 20)); then ok; else
  bad "without rings clock-sweep missed $plain times, not over 5 % above the server's $server"
fi

run sim --trace "$trace" --policy clock-sweep --size 2048 --ignore-size --ring-rule pg --compare-found --json
expect_status 0 "sim --ring-rule pg --compare-found"
ringed=$(field misses)
agree=$(field agree_misses)
if within "$ringed" "$server" 5; then ok; else
  bad "with --ring-rule pg clock-sweep missed $ringed times; the server $server (want within 0.5 %)"
fi
if ((agree * 1000 >= server * 995)); then ok; else
  bad "only $agree of the server's $server misses are simulated misses too"
fi
if [[ $(field ring_requests) == 229440 ]]; then ok; else
  bad "$(field ring_requests) requests went through rings; the 30 scans are 229440"
fi

# The real pool, its own rings: ordered equals the simulator.
run replay --trace "$trace" --pool 16MiB --policy clock-sweep --ring-rule pg --json
expect_status 0 "replay --ring-rule pg"
if [[ $(field misses) == "$ringed" ]]; then ok; else
  bad "ordered replay missed $(field misses) times, the simulator $ringed"
fi
# A thread per pid, as the server ran: the interleaving is the machine's.
run replay --trace "$trace" --pool 16MiB --policy clock-sweep --ring-rule pg --by-pid --json
expect_status 0 "replay --by-pid --ring-rule pg"
if [[ $(field threads) == 5 ]] && within "$(field misses)" "$server" 5; then ok; else
  bad "replay --by-pid: $(field threads) threads, $(field misses) misses; the server $server"
fi

# The docs quote these runs' figures for the checked-in trace: they must be
# the ones the tool gives now (a change that moves them must move the docs).
commas() { sed -E ':a; s/([0-9])([0-9]{3})($|,)/\1,\2\3/; ta' <<<"$1"; }
for doc in docs/simulator.md tests/data/README.md; do
  if grep -q "$(commas "$ringed")" "$root/$doc"; then ok; else
    bad "$doc does not quote --ring-rule pg's $(commas "$ringed") misses"
  fi
done
if grep -q "$(commas "$plain") misses" "$root/tests/data/README.md" &&
  grep -q "clock-sweep  *2048 objects  *235302  *$plain " "$root/docs/simulator.md"; then ok; else
  bad "tests/data/README.md or docs/simulator.md do not quote clock-sweep's $plain misses"
fi

cli_finish
