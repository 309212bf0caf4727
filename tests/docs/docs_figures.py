#!/usr/bin/env python3
"""tests/docs/docs_figures.py — every measured figure the docs quote is in the report.

The rule. README.md and docs/*.md (all but docs/results.md, the report) are cut
into blocks: a paragraph (lines up to a blank line), each item of a list (a
line starting "- ", "* " or "N. " starts a new block), and a table (its "|"
lines, together with the last paragraph above it, even with a code block
between them). Fenced code blocks are not
read: they show what a command prints, not claims.

A figure is a number with a unit of measurement, one of:
  - a decimal ratio or percentage: 1.15×, 1.15 x, 0.02 %, 39.64%
  - a latency: any number of ns or µs (us), or a decimal number of ms
  - a rate: a number followed by MB/s, GB/s, KiB/s, ops/s, M/s, k/s, tps,
    MQPS, or any word/s (commits/s, reads/s, lookups/s)
  - a decimal count in thousands or millions: 3.66 M, 1.5 k
  - a run time: 2 min 20 s

A block that holds a figure must link to a section of the report —
"(results.md#anchor)" from docs/, "(docs/results.md#anchor)" from the README,
in a markdown link or a code span — and every figure of the block must appear
in one of the sections it links to (the heading the anchor names and
everything under it, down to the next heading of the same or a higher level),
written the same way: the same digits, the same unit, spaces between number
and unit ignored, "x" after a number read as "×". An anchor must name a
heading of the report (GitHub's rule: lower case, punctuation dropped, spaces
to hyphens). A block with a figure and no such link fails.

SETTINGS lists, per file, the tokens that look like figures but are settings
or arithmetic (a spin time, a clock step), each with its reason; they are not
checked. Keep it short.

Usage: docs_figures.py REPO_ROOT
Prints one FAIL line per problem and "N passed, N failed" last; exits non-zero
if anything failed.
"""
import glob
import os
import re
import sys

# (file, figure as written) -> why it is not a measurement.
SETTINGS = {
    ("docs/simulator.md", "0.1 %"): "--mrc's smallest size: a setting",
    ("docs/simulator.md", "0.25 ms"): "the test's clock step per request: a setting",
    ("docs/strategies.md", "50 µs"): "how long an idle I/O worker spins: a setting",
    ("docs/strategies.md", "5 µs"): "a batch's copy time, worked out from its size: arithmetic",
    ("docs/vacuum.md", "25 µs"): "the spinner's yield interval: a setting",
    ("docs/wal.md", "500 µs"): "the test's injected delay: a setting",
}

NUM = r"(?<![\w.,/-])(\d{1,3}(?:,\d{3})+|\d+)"
DEC = NUM + r"(\.\d+)"
FIGURE = re.compile(
    "|".join([
        DEC + r"\s?(×|x(?![\w-])|%)",
        NUM + r"(\.\d+)?\s?(ns|µs|us)(?![\w/])",
        DEC + r"\s?(ms)(?![\w/])",
        NUM + r"(\.\d+)?\s?([KMG]i?B/s|[kMG]B/s|[kM]?ops/s|[kM]/s|tps|MQPS|[a-z]+/s)(?![\w/])",
        DEC + r"\s?([kM])(?![\w/(])",
        r"(?<![\w.])(\d+)\s?min\s(\d+)\s?s(?!\w)",
    ]))
LINK = re.compile(r"results\.md#([a-z0-9_-]+)")


def figures(text):
    """The figures of a text, each normalised: digits, then its unit."""
    out = []
    for m in FIGURE.finditer(text):
        g = [x for x in m.groups() if x is not None]
        if "min" in m.group(0):
            out.append((m.group(0), f"{g[0]}min{g[1]}s"))
            continue
        unit = g[-1]
        unit = {"x": "×", "us": "µs"}.get(unit, unit)
        out.append((m.group(0).strip(), "".join(g[:-1]) + unit))
    return out


def slug(heading):
    h = heading.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h, flags=re.UNICODE)
    return h.replace(" ", "-")


def report_sections(path):
    """anchor -> the normalised figures of that section (with its subsections)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    heads = []
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            m = re.match(r"^(#{1,6}) (.*)$", line)
            if m:
                heads.append((i, len(m.group(1)), slug(m.group(2))))
    sections = {}
    for k, (i, level, anchor) in enumerate(heads):
        end = len(lines)
        for j, lev, _ in heads[k + 1:]:
            if lev <= level:
                end = j
                break
        text = " ".join(lines[i:end])
        sections[anchor] = {norm for _, norm in figures(text)}
    return sections


def blocks(path):
    """(first line number, text) of each block outside code fences."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, cur, start, fenced = [], [], 0, False
    prev_para = None  # the paragraph just above, for a table

    def close():
        nonlocal cur, prev_para
        if cur:
            text = " ".join(cur)
            is_table = cur[0].lstrip().startswith("|")
            if is_table and prev_para is not None:
                text = prev_para + " " + text
            out.append((start, text))
            prev_para = None if is_table else text
        cur = []

    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            close()
            fenced = not fenced
            continue
        if fenced:
            continue
        if not line.strip():
            close()
            continue
        is_item = re.match(r"^\s*([-*] |\d+\. )", line) is not None
        is_table = line.lstrip().startswith("|")
        if cur and (is_item or is_table != cur[0].lstrip().startswith("|")):
            close()
        if not cur:
            start = n
        cur.append(line.strip())
    close()
    return out


def main():
    top = sys.argv[1]
    report = os.path.join(top, "docs", "results.md")
    sections = report_sections(report)
    docs = [os.path.join(top, "README.md")] + sorted(
        p for p in glob.glob(os.path.join(top, "docs", "*.md")) if os.path.basename(p) != "results.md")
    passed = failed = 0
    for path in docs:
        rel = os.path.relpath(path, top)
        for n, text in blocks(path):
            found = [(raw, norm) for raw, norm in figures(text) if (rel, raw) not in SETTINGS]
            anchors = LINK.findall(text)
            bad_anchor = [a for a in anchors if a not in sections]
            for a in bad_anchor:
                failed += 1
                print(f"FAIL: {rel}:{n}: links to results.md#{a}, which is no heading of the report")
            if not found:
                continue
            good = [a for a in anchors if a in sections]
            if not good:
                failed += 1
                shown = ", ".join(raw for raw, _ in found[:4])
                print(f"FAIL: {rel}:{n}: quotes {shown} with no link to a section of docs/results.md")
                continue
            have = set().union(*(sections[a] for a in good))
            for raw, norm in found:
                if norm in have:
                    passed += 1
                else:
                    failed += 1
                    print(f"FAIL: {rel}:{n}: {raw} is not in docs/results.md#{' or #'.join(good)}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
