#!/usr/bin/env python3
"""The WMT14 recipe's results: one run's results.json, and the table of all runs beside Table 2.

  results.py write RUN_DIR PAIR MODEL [OVERRIDES]
      reads RUN_DIR/scores.json (nmt-bleu --json on newstest2014), RUN_DIR/dev.json (nmt-evaluate
      --json on newstest2013, optional), RUN_DIR/train/config.yaml and run.json; writes
      RUN_DIR/results.json and prints "BLEU CHRF SIGNATURE" on one line for the shell
  results.py table WORK_DIR
      prints every WORK_DIR/*/results.json in the layout of the paper's Table 2, beside its figures

Python 3 standard library only (the resolved config.yaml is read for a few scalar keys).
"""

import glob
import json
import os
import sys

# The paper's Table 2 (newstest2014, tokenized BLEU): the figures to set ours beside.
PAPER_BLEU = {("base", "en-de"): 27.3, ("base", "en-fr"): 38.1,
              ("big", "en-de"): 28.4, ("big", "en-fr"): 41.8}
MODEL_NAMES = {"base": "Transformer (base model)", "big": "Transformer (big)"}


def config_value(path, section, key):
    """A scalar of a two-level YAML file as nmt-train writes config.yaml; None when absent."""
    current = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line and not line[0].isspace() and line.rstrip().endswith(":"):
                current = line.strip()[:-1]
            elif current == section and line.strip().startswith(key + ":"):
                return line.split(":", 1)[1].strip().strip('"')
    return None


def write(run_dir, pair, model, overrides):
    scores = {m["name"]: m for m in json.load(open(os.path.join(run_dir, "scores.json")))}
    bleu, chrf = scores["BLEU"], scores.get("chrF2")
    config = os.path.join(run_dir, "train", "config.yaml")
    result = {
        "pair": pair,
        "model": model,
        "run_dir": os.path.abspath(run_dir),
        "overrides": overrides,
        "max_steps": int(config_value(config, "train", "max_steps")),
        "decode": {"average_last": int(config_value(config, "decode", "average_last")),
                   "beam": int(config_value(config, "decode", "beam")),
                   "alpha": round(float(config_value(config, "decode", "alpha")), 6),
                   "max_len_offset": 50},
        "test": {"set": "newstest2014 (full)",
                 "sentences": sum(1 for _ in open(os.path.join(run_dir, "newstest2014.ref"),
                                                  encoding="utf-8")),
                 "bleu": bleu["score"], "chrf": chrf["score"] if chrf else None,
                 "signature": bleu["signature"], "verbose": bleu.get("verbose_score", "")},
        "paper_bleu": PAPER_BLEU[(model, pair)],
    }
    dev_path = os.path.join(run_dir, "dev.json")
    if os.path.exists(dev_path):
        dev = json.load(open(dev_path))
        result["dev"] = {"set": "newstest2013", "bleu": dev["bleu"],
                         "perplexity": dev["perplexity"], "step": dev["step"]}
        result["steps"] = dev["step"]
        result["parameters"] = dev["parameters"]
    run_json = os.path.join(run_dir, "train", "run.json")
    if os.path.exists(run_json):
        result["uid"] = json.load(open(run_json))["uid"]
    tmp = os.path.join(run_dir, "results.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(run_dir, "results.json"))
    chrf_text = f"{chrf['score']}" if chrf else "-"
    print(f"{bleu['score']} {chrf_text} {bleu['signature']}")


def table(work_dir):
    runs = []
    for path in glob.glob(os.path.join(work_dir, "*", "results.json")):
        result = json.load(open(path))
        result["_mtime"] = os.path.getmtime(path)
        result["_name"] = os.path.basename(os.path.dirname(path))
        runs.append(result)
    newest = {}
    for r in sorted(runs, key=lambda r: r["_mtime"]):
        newest[(r["model"], r["pair"])] = r  # the newest run of each cell is shown

    def ours(model, pair):
        r = newest.get((model, pair))
        if r is None:
            return "not run"
        steps = f"{r['steps']:,} steps" if "steps" in r else "steps unknown"
        return f"**{r['test']['bleu']}** ({r['_name']}, {steps})"

    print(f"WMT14 newstest2014: this project's runs (in {work_dir}) beside the paper's Table 2\n")
    print("| model | EN-DE ours (sacreBLEU) | EN-DE paper (tokenized) | EN-FR ours (sacreBLEU) "
          "| EN-FR paper (tokenized) |")
    print("| --- | --- | --- | --- | --- |")
    for model in ("base", "big"):
        print(f"| {MODEL_NAMES[model]} | {ours(model, 'en-de')} | {PAPER_BLEU[(model, 'en-de')]} "
              f"| {ours(model, 'en-fr')} | {PAPER_BLEU[(model, 'en-fr')]} |")
    print("\nours: BLEU of detokenized output against newstest2014's raw references (test-full:"
          " 3,003 sentences per pair in WMT14's release), sacreBLEU's 13a tokenization, by"
          " nmt-bleu; the paper: tokenized BLEU (Moses tokenizer, EN-DE with compound splitting)."
          " Not the same measure: docs/wmt14.md says how they differ.")
    for r in sorted(newest.values(), key=lambda r: (r["pair"], r["model"])):
        d = r["decode"]
        notes = [f"{r['test']['sentences']:,} sentences",
                 f"BLEU {r['test']['bleu']}, chrF2 {r['test']['chrf']}",
                 f"average of the last {d['average_last']} checkpoints, beam {d['beam']}, "
                 f"alpha {d['alpha']:g}, output <= input + {d['max_len_offset']}"]
        if "dev" in r:
            notes.append(f"newstest2013 BLEU {r['dev']['bleu']:.2f}, perplexity "
                         f"{r['dev']['perplexity']:.2f}")
        if "steps" in r and r["steps"] < r["max_steps"]:
            notes.append(f"stopped at step {r['steps']:,} of {r['max_steps']:,}")
        if r.get("overrides"):
            notes.append(f"overrides: {r['overrides']}")
        if "parameters" in r:
            notes.append(f"{r['parameters']:,} parameters")
        print(f"- {r['_name']} ({r['pair']}, {r['model']}): " + "; ".join(notes))
        print(f"  BLEU|{r['test']['signature']}")
    if not newest:
        print("- no run with results yet (jobs/wmt14/run.sh writes RUN/results.json)")


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
