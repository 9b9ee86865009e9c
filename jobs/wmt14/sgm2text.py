#!/usr/bin/env python3
"""A WMT newstest SGML file as plain text, one segment a line, exactly as sacreBLEU reads it.

sacreBLEU (its FakeSGMLDataset, used for wmt14/full) keeps the lines that start with "<seg ",
takes what lies between the <seg ...> tag and the last </seg>, strips it and collapses runs of
white space into one space. It does not unescape SGML entities, so neither does this: the text
stays what `sacrebleu -t wmt14/full -l en-de --echo src` (or `ref`) prints, which is what its
published scores are computed against. (nmt-preprocess's SGML reader, for the shards, does
unescape; sacreBLEU's maintainers note WMT's sets have not used entities since 2009, so on the real
files the two agree. The count of segments holding an entity is printed to stderr, to tell.)

Usage: sgm2text.py FILE.sgm > FILE.txt   (python3, standard library only)
"""

import re
import sys

SEGMENT = re.compile(r"<seg.*?>(.*)</seg>.*?")
ENTITY = re.compile(r"&(#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z]+);")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    segments = with_entities = 0
    out = sys.stdout
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("<seg "):
                continue
            text = re.sub(r"\s+", " ", SEGMENT.sub(r"\1", line).strip())
            out.write(text + "\n")
            segments += 1
            with_entities += bool(ENTITY.search(text))
    if segments == 0:
        print(f"sgm2text.py: {path}: no <seg> lines", file=sys.stderr)
        return 1
    if with_entities:
        print(f"sgm2text.py: {path}: {with_entities} of {segments} segments hold SGML entities, "
              "kept as written (as sacreBLEU keeps them)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
