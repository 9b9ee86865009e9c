#!/usr/bin/env python3
"""A WMT newstest SGML file as plain text, one segment a line, exactly as sacreBLEU reads it.

sacreBLEU (its FakeSGMLDataset, used for wmt14/full) keeps the lines that start with "<seg ",
takes what lies between the <seg ...> tag and the last </seg>, strips it and collapses runs of
white space into one space. It does not unescape SGML entities, so neither does this: the text
stays what `sacrebleu -t wmt14/full -l en-de --echo src` (or `ref`) prints, which is what its
published scores are computed against. (nmt-preprocess's SGML reader, for the shards, does
unescape; sacreBLEU's maintainers note WMT's sets have not used entities since 2009, so on the real
files the two agree. The count of segments holding an entity is printed to stderr, to tell.)

A file whose <seg> elements are not one a line is refused as nmt-preprocess refuses it, naming the
file and the line, with exit status 1 and no text written: a <seg> opened inside another, a
</seg> with no <seg> open, a <seg> that closes on a later line or not at all.

Usage: sgm2text.py FILE.sgm > FILE.txt   (python3, standard library only)
"""

import re
import sys

SEGMENT = re.compile(r"<seg.*?>(.*)</seg>.*?")
ENTITY = re.compile(r"&(#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z]+);")
SEG_TAG = re.compile(r"<(/?)seg(?=[\s>/]|$)", re.IGNORECASE)


class SgmlError(Exception):
    pass


def check_structure(lines):
    """Raises SgmlError, "LINE: what", unless every <seg> opens and closes on one line, alone."""
    opened = 0  # the line of the <seg> not yet closed; 0 when none is open
    for number, line in enumerate(lines, 1):
        for tag in SEG_TAG.finditer(line):
            closing = tag.group(1) == "/"
            if not closing and opened:
                raise SgmlError(f"{number}: <seg> opened inside another <seg> (opened on line "
                                f"{opened}): segments do not nest")
            if closing and not opened:
                raise SgmlError(f"{number}: </seg> without an open <seg>")
            if closing and opened != number:
                raise SgmlError(f"{opened}: <seg> closes on line {number}, not on the line it "
                                "opens (a <seg> must open and close on one line)")
            opened = 0 if closing else number
    if opened:
        raise SgmlError(f"{opened}: <seg> not closed by the end of the file")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        check_structure(lines)
    except SgmlError as e:
        print(f"sgm2text.py: {path}:{e}", file=sys.stderr)
        return 1
    texts = [re.sub(r"\s+", " ", SEGMENT.sub(r"\1", line).strip())
             for line in lines if line.startswith("<seg ")]
    segments = len(texts)
    with_entities = sum(bool(ENTITY.search(text)) for text in texts)
    sys.stdout.write("".join(text + "\n" for text in texts))
    if segments == 0:
        print(f"sgm2text.py: {path}: no <seg> lines", file=sys.stderr)
        return 1
    if with_entities:
        print(f"sgm2text.py: {path}: {with_entities} of {segments} segments hold SGML entities, "
              "kept as written (as sacreBLEU keeps them)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
