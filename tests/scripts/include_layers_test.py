#!/usr/bin/env python3
"""The project's folders form layers, and no include runs from a lower layer to a higher one.

    common -> preprocess, eval, tracker -> trainer -> sweep, tracking -> apps -> bench, fuzz, tests

Inside tracker/ likewise: api -> store, client, view, dashboard -> server, cli. A folder may
include its own layer's other folders only where the table below says so (none do today).
Exit status 1 names every include that runs back up: FILE:LINE includes HEADER (LAYER over LAYER).
"""
import pathlib
import re
import sys

LAYERS = [
    ["common"],
    ["preprocess", "eval", "tracker"],
    ["trainer"],
    ["sweep", "tracking"],
    ["apps"],
    ["bench", "fuzz", "tests"],
]
TRACKER_LAYERS = [
    ["api"],
    ["store", "client", "view", "dashboard"],
    ["server", "cli"],
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')


def rank(layers, name):
    for level, names in enumerate(layers):
        if name in names:
            return level
    return None


def unit(path):
    """(folder, tracker subfolder or None) of a file's path from the root."""
    parts = path.parts
    return parts[0], (parts[1] if parts[0] == "tracker" and len(parts) > 2 else None)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    wrong = []
    checked = 0
    folders = [name for layer in LAYERS for name in layer]
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".h", ".cpp") or not path.is_file():
                continue
            relative = path.relative_to(root)
            top, sub = unit(relative)
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match or match.group(1) not in folders:
                    continue
                checked += 1
                target_top = match.group(1)
                header = f"{target_top}/{match.group(2)}"
                if rank(LAYERS, target_top) > rank(LAYERS, top) or (
                        target_top != top and rank(LAYERS, target_top) == rank(LAYERS, top)):
                    wrong.append(f"{relative}:{number} includes {header} ({target_top} over {top})")
                    continue
                if top == "tracker" and target_top == "tracker" and sub is not None:
                    target_sub = pathlib.PurePath(match.group(2)).parts[0]
                    a, b = rank(TRACKER_LAYERS, sub), rank(TRACKER_LAYERS, target_sub)
                    if a is not None and b is not None and (b > a or (b == a and sub != target_sub)):
                        wrong.append(f"{relative}:{number} includes {header} "
                                     f"(tracker/{target_sub} over tracker/{sub})")
    if checked == 0:
        print(f"include_layers: no project includes found under {root}", file=sys.stderr)
        return 1
    for line in wrong:
        print(line)
    print(f"include_layers: {checked} includes between project folders, {len(wrong)} running back up")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
