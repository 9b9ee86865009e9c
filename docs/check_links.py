#!/usr/bin/env python3
"""Checks that every relative link in the Markdown documentation resolves.

Usage: docs/check_links.py [ROOT]   (ROOT: the repository root, default this file's parent's parent)

Reads README.md, configs/README.md, tracker/API.md and every docs/**/*.md. A link [text](target)
whose target is not a URL must name an existing file or folder, relative to the page; a #fragment
must match a heading of the target page (GitHub's anchors: lowercase, punctuation dropped, spaces
to hyphens). Prints each broken link as page:line: target and exits 1 if there is one.
"""
import pathlib
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def anchors(page):
    names = set()
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            title = re.sub(r"[^\w\- ]", "", title)
            names.add(title.replace(" ", "-"))
    return names


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    pages = [root / "README.md", root / "configs/README.md", root / "tracker/API.md"]
    pages += sorted((root / "docs").rglob("*.md"))
    broken = []
    for page in pages:
        if not page.exists():
            continue
        in_code = False
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if FENCE.match(line):
                in_code = not in_code
                continue
            if in_code:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, https:, mailto:
                path, _, fragment = target.partition("#")
                dest = (page.parent / path).resolve() if path else page
                if not dest.exists():
                    broken.append(f"{page.relative_to(root)}:{number}: {target} (no such file)")
                elif fragment and dest.is_file() and dest.suffix == ".md":
                    if fragment not in anchors(dest):
                        broken.append(f"{page.relative_to(root)}:{number}: {target} (no such heading)")
    for line in broken:
        print(line)
    print(f"{len(pages)} pages checked, {len(broken)} broken link(s)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
