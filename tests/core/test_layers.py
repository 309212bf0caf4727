#!/usr/bin/env python3
"""tests/test_layers.py — the library stays a library: its layers, and the lab
kept apart from it.

The library (src/ and include/hotset) is a stack of layers: core at the
bottom; storage, the log (wal) and the replacement policies (policy) above
it; the buffer pool above those; the frame cache, the heap and vacuum on
top. The lab (lab/: simulator, benchmarks, crash tools, the CLI) is built
on the library and nothing in the library may see it. Checked here:

 1. Every #include of a file under src/ or include/hotset names a public
    header (hotset/...) or a header of its own layer or of a layer below
    (LOWER below). Nothing names a lab header (lab/...).
 2. A header named *_internal.h is private to its directory: no file of
    another directory of the library includes it (the layer that owns it
    offers what others need in another header).
 3. A public header includes only other public headers and the C library.
 4. The shared library carries no symbol of the lab's crash simulator and no
    test hook: the one way in for tests and the lab is the seam table
    (src/core/seams.h), the symbol `seams`.

Usage: test_layers.py REPO_ROOT [PATH/TO/libhotset.so]
Prints "N passed, N failed" last and exits non-zero if anything failed.
"""
import os
import re
import subprocess
import sys

# What each layer of the library may include besides itself and hotset/.
LOWER = {
    "core": set(),
    "policy": {"core"},
    "wal": {"core"},
    # The control file checks the log addresses it records against the
    # log's on-disk format (wal/wal_format.h), and nothing else of the log.
    "storage": {"core", "wal/wal_format.h"},
    "pool": {"core", "storage", "wal", "policy"},
    "cache": {"core", "policy"},
    "heap": {"core", "storage", "wal", "pool"},
    "vacuum": {"core", "storage", "wal", "pool", "heap"},
}
LAB_DIRS = {"lab", "sim", "bench", "cli", "common", "crash"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Symbols of the power-cut simulator (pc_*, powercut) or of a test hook
# (*_hook*) in any symbol table of the library, local ones included.
FORBIDDEN_SYMBOL = re.compile(r"^(pc_\w+|\w*powercut\w*|\w*_hook\w*)$")


def main():
    top = sys.argv[1]
    lib = sys.argv[2] if len(sys.argv) > 2 else None
    passed, failed = 0, 0

    def check(ok, msg):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL: " + msg)

    src = os.path.join(top, "src")
    for layer in sorted(os.listdir(src)):
        ldir = os.path.join(src, layer)
        if not os.path.isdir(ldir):
            continue
        check(layer in LOWER, "src/%s is not a known layer of the library (add it to LOWER)" % layer)
        allowed = LOWER.get(layer, set())
        for name in sorted(os.listdir(ldir)):
            if not name.endswith((".c", ".h")):
                continue
            path = "src/%s/%s" % (layer, name)
            text = open(os.path.join(ldir, name), encoding="utf-8").read()
            for inc in INCLUDE.findall(text):
                head = inc.split("/")[0]
                if head == "hotset":
                    check(os.path.exists(os.path.join(top, "include", inc)),
                          "%s includes %s, which is not a public header" % (path, inc))
                    continue
                check(head not in LAB_DIRS, "%s includes the lab's %s" % (path, inc))
                if head in LAB_DIRS:
                    continue
                ok = head == layer or head in allowed or inc in allowed
                check(ok, "%s (layer %s) includes %s: layer %s is not below it" %
                      (path, layer, inc, head))
                private = inc.endswith("_internal.h")
                check(not private or head == layer,
                      "%s includes %s, private to src/%s/" % (path, inc, head))

    inc_dir = os.path.join(top, "include", "hotset")
    for name in sorted(os.listdir(inc_dir)):
        if not name.endswith(".h"):
            continue
        text = open(os.path.join(inc_dir, name), encoding="utf-8").read()
        for inc in INCLUDE.findall(text):
            check(inc.startswith("hotset/"),
                  "include/hotset/%s includes %s, not a public header" % (name, inc))

    if lib:
        out = subprocess.run(["nm", "-a", lib], capture_output=True, text=True)
        check(out.returncode == 0, "nm %s failed: %s" % (lib, out.stderr.strip()))
        names = [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]
        bad = sorted({n for n in names if FORBIDDEN_SYMBOL.match(n)})
        check(not bad, "%s carries crash-simulator or test-hook symbols: %s" %
              (lib, " ".join(bad[:20])))
        check("seams" in names, "%s has no seam table (symbol seams): the check above "
              "looks at the wrong library" % lib)

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
