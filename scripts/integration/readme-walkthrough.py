#!/usr/bin/env python3
"""Extracts README.md's walkthrough: every ```sh block right after a line
`<!-- walkthrough -->`, in order, as one shell script on stdout (for
scripts/integration/readme-checks.sh, which runs it with bash -euo pipefail).

Refuses, exiting 1 with the reasons on stderr:
- no marked block, or a marker not followed by a ```sh block;
- a token written out (`lr_at_…`, `lr_rt_…`): the walkthrough keeps the tokens
  the service returned in shell variables, never a placeholder;
- a curl that would not fail on an error status: each has --fail-with-body (or
  --fail / -f), or writes the status with -w '%{http_code}' for a test to compare.

Usage: readme-walkthrough.py README.md [--blocks N]
  --blocks N: only the first N marked blocks (the container test runs the HTTP ones:
              the later blocks call the executable on the host)
"""
import re
import sys

MARKER = "<!-- walkthrough -->"


def blocks(text):
    lines = text.split("\n")
    found, problems = [], []
    index = 0
    while index < len(lines):
        if lines[index].strip() == MARKER:
            start = index + 1
            while start < len(lines) and not lines[start].strip():
                start += 1
            if start >= len(lines) or lines[start].strip() != "```sh":
                problems.append(f"line {index + 1}: {MARKER} is not followed by a ```sh block")
                index += 1
                continue
            end = start + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            if end >= len(lines):
                problems.append(f"line {start + 1}: the ```sh block never ends")
                break
            found.append((start + 2, lines[start + 1:end]))
            index = end
        index += 1
    return found, problems


def commands(block):
    """Logical lines (continuations joined), with the line number each starts on."""
    first, lines = block
    joined, current, start = [], "", None
    for offset, line in enumerate(lines):
        if start is None:
            start = first + offset
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        joined.append((start, current + line))
        current, start = "", None
    return joined


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    found, problems = blocks(text)
    if "--blocks" in sys.argv:
        found = found[:int(sys.argv[sys.argv.index("--blocks") + 1])]
    if not found:
        problems.append(f"no block marked {MARKER}")
    for block in found:
        for line, command in commands(block):
            code = command.split("#", 1)[0] if not command.lstrip().startswith("#") else ""
            if re.search(r"lr_(at|rt)_", code):
                problems.append(f"line {line}: a token written out instead of one kept from a response: {command.strip()}")
            for call in re.findall(r"\bcurl\b[^|;&)]*", code):
                if not re.search(r"(\s--fail(-with-body)?\b|\s-[A-Za-z]*f[A-Za-z]*\b|%\{http_code\})", call):
                    problems.append(f"line {line}: curl without --fail-with-body: {call.strip()}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print("# README.md's walkthrough, extracted by scripts/integration/readme-walkthrough.py")
    for first, lines in found:
        print(f"# --- README.md line {first}")
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
