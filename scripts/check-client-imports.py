#!/usr/bin/env python3
"""Fails when a source of the Swift client imports a module its target does not declare.

`make test` builds the client as a root package on the server's scratch path, so the modules
the server's build already compiled are reused (6 minutes saved on a cold CI run) — but then
every module of the server's graph is on the import path too, and `import Hummingbird` in the
client would still compile, and SwiftPM's --explicit-target-dependency-import-check does not
catch it. This check stands in for what a build of its own proved: each target imports only
its own target dependencies, the products it declares, and the platforms' SDK modules.
"""
import json
import pathlib
import re
import subprocess
import sys

PACKAGE = pathlib.Path("clients/LandmarkRemarkClient")
# Modules of the toolchains and SDKs an app builds against, which no package provides.
SYSTEM = {"Foundation", "FoundationNetworking", "FoundationEssentials", "Dispatch", "Glibc", "Darwin",
          "CoreLocation", "MapKit", "Security", "UIKit", "AppKit", "SwiftUI", "Combine", "os"}
IMPORT = re.compile(r"^\s*(?:@[\w]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([A-Za-z_][\w]*)", re.M)


def main() -> int:
    description = json.loads(subprocess.run(
        ["swift", "package", "--package-path", str(PACKAGE), "--scratch-path", ".build", "describe", "--type", "json"],
        check=True, capture_output=True, text=True).stdout)
    failures = []
    for target in description["targets"]:
        allowed = SYSTEM | {target["name"]} | set(target.get("product_dependencies") or []) | set(target.get("target_dependencies") or [])
        for source in sorted((PACKAGE / target["path"]).rglob("*.swift")):
            for module in IMPORT.findall(source.read_text(encoding="utf-8")):
                if module not in allowed:
                    failures.append(f"{source}: imports {module}, which target {target['name']} does not declare")
    for failure in failures:
        print(failure, file=sys.stderr)
    if failures:
        return 1
    print(f"the Swift client imports only what its {len(description['targets'])} targets declare")
    return 0


if __name__ == "__main__":
    sys.exit(main())
