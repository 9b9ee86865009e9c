"""The CTranslate2 side of bench/decode_vs_ctranslate2.sh: translates a text file with a model
directory written by nmt-export, the way nmt-translate does as far as CTranslate2's options allow,
and writes one detokenized line per input line. The whole process is what the script times.

 - tokenized with the directory's spm.model (nmt-translate's own SentencePiece model), EOS appended
   by CTranslate2 (the export's add_source_eos), decoding from BOS;
 - sentences sorted by length and cut into batches of --batch sentences, as nmt-translate sorts
   into token-budget batches;
 - beam search: beam_size and length_penalty as given. CTranslate2 normalizes by |Y|^alpha where
   nmt-translate divides by GNMT's ((5 + |Y|) / 6)^alpha: the same alpha, another penalty;
 - the length cap: nmt-translate stops each sentence at its source tokens + EOS + 50 (within the
   position table). CTranslate2 takes one max_decoding_length per call: the batch's longest
   source's cap; each output is then cut to its own sentence's cap (for greedy decoding that is
   exactly nmt-translate's output; a beam may differ where the cap binds).
Usage: ct2_decode.py MODEL_DIR INPUT OUTPUT --beam N --alpha A --batch B --compute-type T --threads N
"""
import argparse
import os

import ctranslate2
import sentencepiece


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--batch", type=int, default=32, help="sentences per batch")
    parser.add_argument("--compute-type", default="float32")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-positions", type=int, default=1024,
                        help="the model's position table (model.max_positions)")
    args = parser.parse_args()

    sp = sentencepiece.SentencePieceProcessor(
        model_file=os.path.join(args.model_dir, "spm.model"))
    translator = ctranslate2.Translator(args.model_dir, device="cpu",
                                       compute_type=args.compute_type,
                                       inter_threads=1, intra_threads=args.threads)
    with open(args.input, encoding="utf-8") as f:
        sources = [sp.encode(line, out_type=str) for line in f.read().splitlines()]
    limit = args.max_positions - 1  # source tokens + EOS must fit the table
    caps = [min(min(len(s), limit) + 1 + 50, args.max_positions - 1) for s in sources]
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    outputs = [""] * len(sources)
    for start in range(0, len(order), args.batch):
        chunk = order[start:start + args.batch]
        results = translator.translate_batch(
            [sources[i] for i in chunk], beam_size=args.beam,
            length_penalty=args.alpha if args.beam > 1 else 0.0,
            max_decoding_length=max(caps[i] for i in chunk), max_input_length=limit,
            max_batch_size=0)
        for i, result in zip(chunk, results):
            outputs[i] = sp.decode(result.hypotheses[0][:caps[i]])
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in outputs))


if __name__ == "__main__":
    main()
