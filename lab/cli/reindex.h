/* cli/reindex.h — `hotset reindex`: rebuilds a primary-key index from the
 * heap it indexes (hs_pk_index_rebuild). */
#ifndef HOTSET_CLI_REINDEX_H
#define HOTSET_CLI_REINDEX_H

/* argv[0] is "reindex". Returns 0, or 1 on an error or without --force. */
int reindex_main(int argc, char **argv);

#endif
