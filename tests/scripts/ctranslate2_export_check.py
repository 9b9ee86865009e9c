"""Checks an nmt-export --format ctranslate2 directory against the checkpoint it came from, with
CTranslate2 itself (the pip package; test-only):
 1. teacher-forced log-probabilities: for each pair printed by tests/forced_scores (our model's
    per-token log P of reference translation + EOS), CTranslate2's score_batch on the same token
    pieces must give the same values (float32 kernels of two libraries: within TOLERANCE);
 2. greedy translations: nmt-translate --greedy's output lines must equal CTranslate2's greedy
    search (beam_size 1) of the same inputs, tokenized with the exported spm.model as users would,
    each sentence capped at nmt-translate's length (source tokens + EOS + 50, within the position
    table). Where CTranslate2 outputs <pad>, only the text before it is compared (see below).
Usage: ctranslate2_export_check.py MODEL_DIR FORCED_SCORES SOURCE_TEXT OURS_GREEDY MAX_POSITIONS
"""
import json
import os
import sys

import ctranslate2
import sentencepiece

TOLERANCE = 2e-4


def main():
    model_dir, scores_path, source_path, ours_path, max_positions = sys.argv[1:6]
    max_positions = int(max_positions)
    translator = ctranslate2.Translator(model_dir, device="cpu", compute_type="float32",
                                       intra_threads=1)
    with open(os.path.join(model_dir, "shared_vocabulary.json"), encoding="utf-8") as f:
        pieces = json.load(f)
    failures = []

    worst = 0.0
    pairs = 0
    with open(scores_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            src_ids, tgt_ids, ours = line.rstrip("\n").split("\t")
            src = [pieces[int(i)] for i in src_ids.split()]
            tgt = [pieces[int(i)] for i in tgt_ids.split()]
            ours = [float(v) for v in ours.split()]
            theirs = translator.score_batch([src], [tgt])[0].log_probs
            if len(theirs) != len(ours):
                failures.append("pair %d: %d scores from CTranslate2, %d from the checkpoint"
                                % (n, len(theirs), len(ours)))
                continue
            diff = max(abs(a - b) for a, b in zip(ours, theirs))
            worst = max(worst, diff)
            if diff > TOLERANCE:
                failures.append("pair %d: log-probabilities differ by up to %.6f\n  ours   %s\n"
                                "  theirs %s" % (n, diff, ours[:8], [round(t, 6) for t in theirs[:8]]))
            pairs += 1
    print("teacher-forced: %d pairs, largest |difference| %.2e" % (pairs, worst))

    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(model_dir, "spm.model"))
    with open(source_path, encoding="utf-8") as f:
        sources = f.read().splitlines()
    with open(ours_path, encoding="utf-8") as f:
        ours_lines = f.read().splitlines()
    if len(ours_lines) != len(sources):
        failures.append("nmt-translate wrote %d lines for %d" % (len(ours_lines), len(sources)))
    same = cut = 0
    for n, (source, ours) in enumerate(zip(sources, ours_lines), 1):
        tokens = sp.encode(source, out_type=str)
        cap = min(len(tokens) + 1 + 50, max_positions - 1)
        result = translator.translate_batch([tokens], beam_size=1, max_decoding_length=cap,
                                            max_input_length=0)
        hypothesis = result[0].hypotheses[0]
        pad = sp.id_to_piece(0)
        if pad in hypothesis:
            # A model that emits <pad> (an untrained one: no target holds it) is decoded on by
            # nmt-translate with that position masked as padding, by CTranslate2 without: only
            # the text before it must agree.
            hypothesis = hypothesis[:hypothesis.index(pad)]
            ours = ours[:len(sp.decode(hypothesis))]
            cut += 1
        theirs = sp.decode(hypothesis)
        if theirs == ours:
            same += 1
        else:
            failures.append("greedy line %d:\n  nmt-translate %r\n  CTranslate2   %r"
                            % (n, ours, theirs))
    print("greedy: %d of %d lines identical (%d up to a <pad> output)" % (same, len(sources), cut))

    if failures:
        print("FAILED:\n" + "\n".join(failures[:10]))
        sys.exit(1)


if __name__ == "__main__":
    main()
