#!/usr/bin/env python3
"""tests/docs/docs_commands.py — the docs cannot name what does not exist.

For every `hotset SUBCOMMAND [LAB] ...` the README and docs/*.md quote (in a
code span or a fenced block), the subcommand (and bench's lab, as `hotset
bench --help` lists them) must be one the tool has, under its current name
(not an old name the tool refuses as renamed), and every --flag after
it must be one that subcommand's --help (`hotset bench LAB --help` for a
lab) lists (or the --no- form of one, or the flag a --no- flag undoes). And every
file of the repository they name (src/..., tests/..., tools/...,
examples/..., include/..., docs/...) must exist. And each library
subsystem's contract page has its caller rules, internal invariants and a
map naming every file of its directory under src/.

Usage: docs_commands.py REPO_ROOT PATH/TO/hotset
Prints "N passed, N failed" last and exits non-zero if anything failed.
"""
import glob
import os
import re
import subprocess
import sys


def main():
    top, hotset = sys.argv[1], sys.argv[2]
    passed, failed = 0, 0

    def bad(msg):
        nonlocal failed
        failed += 1
        print("FAIL: " + msg)

    top_help = subprocess.run([hotset, "--help"], capture_output=True, text=True).stdout
    subcommands = set(re.findall(r"^  ([a-z-]+)  ", top_help, re.M))
    renamed = {}  # word -> the tool's refusal, or "" when it is no old name

    def renamed_refusal(word):
        if word not in renamed:
            err = subprocess.run([hotset, word], capture_output=True, text=True).stderr
            renamed[word] = err.splitlines()[0] if "was renamed" in err else ""
        return renamed[word]
    # The labs as `hotset bench --help` lists them: each one's flags are
    # checked against its own `hotset bench LAB --help`.
    bench_help = subprocess.run([hotset, "bench", "--help"], capture_output=True, text=True).stdout
    labs = set(re.findall(r"^  ([a-z-]+)  ", bench_help.partition("experiments:")[2], re.M))
    if not labs:
        bad("hotset bench --help lists no labs")

    helps = {}

    def help_of(args):
        key = " ".join(args)
        if key not in helps:
            r = subprocess.run([hotset] + args + ["--help"], capture_output=True, text=True)
            helps[key] = r.stdout + r.stderr
        return helps[key]

    def flag_known(name, text):
        def has(n):
            return re.search(r"(^|[^a-z-])--" + re.escape(n) + r"([^a-z-]|$)", text, re.M) is not None
        return name == "help" or has(name) or (name.startswith("no-") and has(name[3:])) or has("no-" + name)

    docs = [os.path.join(top, "README.md")] + sorted(glob.glob(os.path.join(top, "docs", "*.md")))
    cut = re.compile(r"( \| | \|\| | && | ; | #|\) ).*")
    for path in docs:
        rel = os.path.relpath(path, top)
        fenced = False
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for n, line in enumerate(lines, 1):
            if line.startswith("```"):
                fenced = not fenced
                continue
            # The commands on this line: each code span's, or, in a fenced
            # block or on a line that starts with one, the line's.
            texts = []
            if fenced or re.match(r"^(\$ )?(build/)?hotset ", line):
                texts.append(line)
            else:
                texts.extend(re.findall(r"`([^`]*)`", line))
            for text in texts:
                m = re.search(r"(^|[ (])(build/)?hotset ([a-z].*)$", text)
                if not m:
                    continue
                cmd = cut.sub("", m.group(3))
                words = cmd.split()
                sub = words[0]
                if sub not in subcommands:
                    if re.fullmatch(r"[a-z-]+", sub) and renamed_refusal(sub):
                        bad(f"{rel}:{n}: {renamed_refusal(sub)}")
                    continue  # prose: "hotset does not..."
                args = [sub]
                if sub == "bench":
                    lab = words[1] if len(words) > 1 else ""
                    if lab not in labs:
                        if lab and not lab.startswith("-") and not lab.isupper() and not lab.startswith("<"):
                            bad(f"{rel}:{n}: hotset bench {lab}: no such lab")
                        continue
                    args.append(lab)
                text_help = help_of(args)
                for flag in re.findall(r"(?:^| )--([a-z][a-z0-9-]*)", cmd):
                    if flag_known(flag, text_help):
                        passed += 1
                    else:
                        bad(f"{rel}:{n}: hotset {' '.join(args)} has no flag --{flag} (quoted as: hotset {cmd})")
        # Files of the repository the page names.
        text = "\n".join(lines)
        for p in sorted(set(re.findall(r"(?:^|[ `(])((?:src|tests|tools|examples|include|docs)/[A-Za-z0-9_./*-]*[A-Za-z0-9_*])", text, re.M))):
            if "*" in p:
                continue  # a pattern
            if os.path.exists(os.path.join(top, p)):
                passed += 1
            else:
                bad(f"{rel} names {p}, which does not exist")

    # Each subsystem's contract page keeps its caller rules apart from its
    # internal invariants, and names every .c and .h of its directory in its
    # map of files, as `src/DIR/FILE`. A directory that holds two subsystems
    # (src/cache: the frame cache and the object cache) has a page for each,
    # and each of its files is in one of their maps.
    file_maps = {
        "src/pool": ["docs/buffer-pool.md"],
        "src/wal": ["docs/wal.md"],
        "src/heap": ["docs/heap.md"],
        "src/vacuum": ["docs/vacuum.md"],
        "src/cache": ["docs/frame-cache.md", "docs/object-cache.md"],
    }
    for src_dir, pages in file_maps.items():
        texts = []
        for page in pages:
            with open(os.path.join(top, page), encoding="utf-8") as f:
                text = f.read()
            texts.append(text)
            for heading in ("## Caller rules", "## Internal invariants", "## Files"):
                if re.search("^" + re.escape(heading) + "$", text, re.M):
                    passed += 1
                else:
                    bad(f"{page} has no section {heading!r}: a contract page has all three")
        for name in sorted(os.listdir(os.path.join(top, src_dir))):
            if not name.endswith((".c", ".h")):
                continue
            if any(f"`{src_dir}/{name}`" in text for text in texts):
                passed += 1
            else:
                bad(f"the map of files of {' or '.join(pages)} leaves out {src_dir}/{name}")

    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
