# hotset — thin wrapper over CMake so that two commands set everything up:
#   make demo   build, then run the main job on its defaults
#   make test   build, then run every test
# Other targets: build, install (PREFIX=/usr/local), uninstall, clean, format,
# asan, tsan, report.

BUILD ?= build
PREFIX ?= /usr/local
CMAKE_FLAGS ?=
# ROCKSDB=off builds without libhotset-rocksdb and installs none of
# RocksDB's packages (they are the biggest of the dependencies).
ROCKSDB ?= auto
ifeq ($(ROCKSDB),off)
CMAKE_FLAGS += -DHOTSET_ROCKSDB=OFF
endif
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build demo test examples install uninstall clean format format-check asan tsan deps report

all: build

# Installs the build tools when they are missing (a fresh Debian machine has
# gcc and make but not always cmake, nor the zstd headers the simulator uses,
# nor the python3 the command-line tests parse JSON with, nor SQLite's
# headers and shell for libhotset-sqlite and its tests, nor RocksDB's
# headers and tools for libhotset-rocksdb and its tests).
deps:
	@missing=""; command -v cmake >/dev/null 2>&1 || missing="$$missing cmake"; \
	  [ -f /usr/include/zstd.h ] || missing="$$missing libzstd-dev"; \
	  command -v python3 >/dev/null 2>&1 || missing="$$missing python3"; \
	  [ -f /usr/include/sqlite3.h ] || missing="$$missing libsqlite3-dev"; \
	  command -v sqlite3 >/dev/null 2>&1 || missing="$$missing sqlite3"; \
	  if [ "$(ROCKSDB)" != off ]; then \
	    [ -f /usr/include/rocksdb/cache.h ] || missing="$$missing librocksdb-dev"; \
	    command -v cache_bench >/dev/null 2>&1 || missing="$$missing rocksdb-tools"; fi; \
	  if [ -n "$$missing" ]; then echo "installing$$missing"; \
	    (apt-get update -qq && apt-get install -y -qq $$missing) >/dev/null; fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(abspath $(PREFIX)) $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The demo's build is quiet when it works (its output goes to a log, shown
# if it fails), so the table is what the screen shows; with gnuplot the
# cells are drawn too, into $(BUILD)/bench-scan.png. It reads with direct
# I/O where the file system allows it (--io auto), so a miss costs a device
# read and losing the hot set shows in the OLTP latency, not only in the
# hit ratio (docs/results.md, "The scan lab with direct I/O").
demo:
	@echo "make demo: build, then run hotset bench scan --io auto"
	@$(MAKE) --no-print-directory deps
	@tools/quiet-build $(BUILD) $(MAKE)
	@if command -v gnuplot >/dev/null 2>&1; then \
	  ./$(BUILD)/hotset bench scan --io auto --plot $(BUILD)/bench-scan.png; \
	else \
	  ./$(BUILD)/hotset bench scan --io auto && echo "(no plot: gnuplot is not installed; apt-get install gnuplot-nox)"; \
	fi

# A passing test's output is not shown, so its SKIPPED: lines (a check that
# could not run here, e.g. without the sample traces: $$HOTSET_TRACES, else
# ../shared/traces or ../traces beside the repository) are repeated after
# the summary.
# Its build is quiet too (tools/quiet-build: one line, the log shown if it
# fails).
test:
	@$(MAKE) --no-print-directory deps
	@tools/quiet-build $(BUILD) $(MAKE)
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS); status=$$?; \
	  grep -h '^SKIPPED:' $(BUILD)/Testing/Temporary/LastTest.log 2>/dev/null | sort -u; \
	  exit $$status

# The README's three programs, built against the library in $(BUILD) and run
# in a scratch directory: the pool; the log, a crash and recovery; the heap
# and vacuum (run twice, the second run finding the first's rows). The first
# thing to try after cloning: it builds only the library and the programs.
examples:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS) --target quickstart wal_tutorial heap_engine >/dev/null
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && set -e && \
	  echo "== examples/quickstart.c" && ./$(BUILD)/examples/quickstart "$$d/pool" && \
	  echo "== examples/wal_tutorial.c: commit, then crash" && \
	  { ./$(BUILD)/examples/wal_tutorial "$$d/log" write || [ $$? -eq 137 ]; } && \
	  echo "== examples/wal_tutorial.c: recover, then check" && \
	  ./$(BUILD)/examples/wal_tutorial "$$d/log" check && \
	  echo "== examples/heap_engine.c, twice" && \
	  ./$(BUILD)/examples/heap_engine "$$d/heap" && ./$(BUILD)/examples/heap_engine "$$d/heap"

# Every table and plot of docs/results.md again, from this build, into
# $(BUILD)/report (about an hour on a 2-vCPU machine; not run by CI). Steps
# needing what this machine lacks are skipped with a line saying so.
report: build
	tools/report/regenerate --build $(BUILD) --out $(BUILD)/report

# PREFIX always wins: when it differs from the prefix $(BUILD) was configured
# with, reconfigure first (the install paths and hotset.pc depend on it).
install: build
	@want='$(abspath $(PREFIX))'; \
	  have=$$(sed -n 's/^CMAKE_INSTALL_PREFIX:[A-Z]*=//p' $(BUILD)/CMakeCache.txt); \
	  if [ "$$have" != "$$want" ]; then \
	    echo "install prefix: $$want (was $$have): reconfiguring $(BUILD)"; \
	    cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX="$$want" >/dev/null; \
	  fi
	cmake --install $(BUILD)

# Removes the files the last `make install` from $(BUILD) put in place.
uninstall:
	cmake -DMANIFEST=$(BUILD)/install_manifest.txt -P cmake/uninstall.cmake

# Sanitizer builds, each in its own directory. The ASan build also turns on
# the debug checks: a broken rule of the API stops the program there.
asan:
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DHOTSET_DEBUG=ON -DHOTSET_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)
	ctest --test-dir build-asan --output-on-failure -j $(JOBS)

tsan:
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTSET_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS)
	ctest --test-dir build-tsan --output-on-failure -L concurrency

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cc')

format-check:
	clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h' '*.cc')

clean:
	rm -rf $(BUILD) build-asan build-tsan build-clang
