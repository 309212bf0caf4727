/* cli/verify.h — `hotset verify`: a data directory's pages checked on disk. */
#ifndef HOTSET_CLI_VERIFY_H
#define HOTSET_CLI_VERIFY_H

/* argv[0] is "verify". Returns 0, or 1 if a page is bad or unreadable. */
int verify_main(int argc, char **argv);

#endif
