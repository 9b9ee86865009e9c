#!/usr/bin/env python3
"""The SVG documents of tracker/view/svg_plot.h read back by a real XML parser.

Runs svg_plot_test's SvgPlotSamples.Write into a temporary folder, then parses every document
with xml.etree (a malformed one raises) and checks what a reader of the picture relies on: one
polyline per series with data, the labels exactly as given (escaped in the file, restored by the
parser, controls shown as \\xHH), the tick labels, the thinning bound and the file size.
Usage: svg_plot_check.py SVG_PLOT_TEST_BINARY
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def by_class(root, tag, cls):
    return [e for e in root.iter(NS + tag) if e.get("class") == cls]


def texts(root, cls):
    return ["".join(e.itertext()) for e in by_class(root, "text", cls)]


def legend(root):
    # A legend label holds a <title> (the full label) and then its shown text.
    out = []
    for e in by_class(root, "text", "legend-label"):
        title = e.find(NS + "title")
        out.append(((title.text or "") if title is not None else None, (title.tail or "")))
    return out


def points(polyline):
    return [tuple(float(v) for v in p.split(",")) for p in polyline.get("points").split()]


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, NMT_SVG_PLOT_OUT=out)
        subprocess.run([binary, "--gtest_filter=SvgPlotSamples.*"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        names = sorted(os.listdir(out))
        check(len(names) == 8, f"expected 8 sample documents, got {names}")
        docs = {}
        for name in names:
            path = os.path.join(out, name)
            docs[name] = ET.parse(path).getroot()  # raises on a malformed document
            check(docs[name].tag == NS + "svg", f"{name}: root is {docs[name].tag}")
        sizes = {name: os.path.getsize(os.path.join(out, name)) for name in names}

    curves = docs["curves.svg"]
    check(len(by_class(curves, "polyline", "series")) == 3, "curves: not 3 polylines")
    check(len(by_class(curves, "path", "band")) == 1, "curves: not 1 band")
    check(texts(curves, "title") == ["train/loss <&> \"quoted\" 'single'"],
          f"curves: title {texts(curves, 'title')}")
    shown = [text for _, text in legend(curves)]
    check(shown == ['base <run> & "co"', "esc\\x1b[31mred\\x7f", "downsampled"],
          f"curves: legend {shown}")
    x_ticks = texts(curves.find(f"{NS}g[@class='x-ticks']"), "tick")
    check(x_ticks == ["0", "5k", "10k", "15k", "20k", "25k", "30k", "35k"] or
          x_ticks == ["0", "5k", "10k", "15k", "20k", "25k", "30k"], f"curves: x ticks {x_ticks}")

    huge = docs["huge.svg"]
    frame = by_class(huge, "rect", "frame")[0]
    width = float(frame.get("width"))
    drawn = points(by_class(huge, "polyline", "series")[0])
    check(len(drawn) <= 2 * width, f"huge: {len(drawn)} points drawn over {width} pixels")
    check(sizes["huge.svg"] < 60000, f"huge: {sizes['huge.svg']} bytes")
    top = min(y for _, y in drawn)
    check(abs(top - float(frame.get("y"))) < 1, "huge: the spike is not at the top of the frame")

    log = docs["log.svg"]
    y_ticks = texts(log.find(f"{NS}g[@class='y-ticks']"), "tick")
    check(y_ticks == ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"],
          f"log: y ticks {y_ticks}")
    check(len(points(by_class(log, "polyline", "series")[0])) == 5, "log: not 5 points")
    check(texts(log, "note") == ["points not drawn: 2 <= 0 on the log scale"],
          f"log: note {texts(log, 'note')}")

    check(texts(docs["empty.svg"], "no-data") == ["no data"], "empty: no 'no data'")
    check(not by_class(docs["empty.svg"], "polyline", "series"), "empty: has polylines")
    check([t for _, t in legend(docs["empty_series.svg"])] == ["nothing (no data)",
                                                             "all nan (no data)"],
          f"empty_series: legend {legend(docs['empty_series.svg'])}")
    check(len(by_class(docs["single.svg"], "circle", "marker")) == 1, "single: no marker")
    time_ticks = texts(docs["time.svg"].find(f"{NS}g[@class='x-ticks']"), "tick")
    check("1h 30m" in time_ticks and "30m" in time_ticks, f"time: x ticks {time_ticks}")
    check(texts(docs["time.svg"], "x-label") == ["time since start"], "time: x label")

    for message in failures:
        print("FAILED:", message)
    if not failures:
        print(f"svg_plot_check: {len(docs)} documents well-formed and as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
