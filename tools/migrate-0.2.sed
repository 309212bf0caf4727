# tools/migrate-0.2.sed — rewrites a program's hotset 0.1 names to 0.2's.
#
#   sed -i -f tools/migrate-0.2.sed FILE...
#
# GNU sed. Every substitution is word-bounded (\b), and no new name is an
# old one the script would rewrite again, so running it twice changes
# nothing the first run did not. Where an old function's name became a
# struct's name (hs_pool_stats, hs_pool_bgwriter_stats, hs_strategy_stats),
# only calls — the name followed by "(" — are rewritten, before the struct
# renames run. CHANGELOG.md (0.2.0) lists what it cannot do: calls whose
# arguments changed are left for the compiler to point at.

# ---- lifetimes: _open/_close, _create/_destroy -------------------------------
s/\bhs_strategy_free\b/hs_strategy_destroy/g

# ---- options: hs_X_options + hs_X_options_init, no _ex variants --------------
s/\bhs_smgr_open_ex\b/hs_smgr_open/g
s/\bhs_policy_create_ex\b/hs_policy_create/g
s/\bhs_ring_config_parse\b/hs_strategy_options_parse/g
s/\bhs_ring_config\b/hs_strategy_options/g

# ---- statistics: hs_status hs_X_stats_get(const hs_X *, hs_X_stats *) -------
s/\bhs_pool_stats\([[:space:]]*(\)/hs_pool_stats_get\1/g
s/\bhs_io_stats_total\b/hs_pool_stats_total/g
s/\bhs_io_stats_hit_ratio\b/hs_pool_stats_hit_ratio/g
s/\bhs_io_stats\b/hs_pool_stats/g
s/\bhs_pool_bgwriter_stats\([[:space:]]*(\)/hs_pool_bgwriter_stats_get\1/g
s/\bhs_bgwriter_stats\b/hs_pool_bgwriter_stats/g
s/\bhs_strategy_stats\([[:space:]]*(\)/hs_strategy_stats_get\1/g
s/\bhs_ring_stats\b/hs_strategy_stats/g
s/\bhs_checkpoint_stats_get\b/hs_pool_checkpoint_stats_get/g
s/\bhs_checkpoint_stats\b/hs_pool_checkpoint_stats/g
s/\bhs_pool_recovery_report\b/hs_pool_recovery_stats_get/g
s/\bhs_recovery_report\b/hs_pool_recovery_stats/g

# ---- one family prefix per header ---------------------------------------------
s/\bhs_checkpoint\b/hs_pool_checkpoint/g
s/\bhs_pk_lookup\b/hs_pk_index_lookup/g
s/\bhs_db_state_name\b/hs_control_state_name/g

# ---- typedefs everywhere ----------------------------------------------------
s/\bstruct hs_wal \*/hs_wal */g
s/\bstruct hs_wal_read_record \*/hs_wal_read_record */g
