#!/usr/bin/env python3
"""A miniature WMT14 tree in WMT's own layout and formats, for jobs/wmt14/ and its CTest.

Writes OUT/mirror/ with the archives jobs/wmt14/get-data.sh fetches, under their statmt.org names
and with the members WMT packs in them (paths as in the real archives):

  training-parallel-europarl-v7.tgz  training/europarl-v7.{de-en,fr-en}.{en,de,fr}   plain text
  training-parallel-commoncrawl.tgz  commoncrawl.{de-en,fr-en}.*  (top level, as WMT ships it)
  training-parallel-nc-v9.tgz        training/news-commentary-v9.{de-en,fr-en}.*
  training-parallel-un.tgz           un/undoc.2000.fr-en.{en,fr}
  training-giga-fren.tar             giga-fren.release2.fixed.{en,fr}.gz  (gzip inside a plain tar)
  dev.tgz                            dev/newstest2013-src.en.sgm, dev/newstest2013-ref.{de,fr}.sgm,
                                     dev/newstest2013.{en,de,fr} (WMT also ships plain text)
  test-full.tgz                      test-full/newstest2014-{deen,fren}-{src,ref}.*.sgm

plus OUT/checksums.txt (get-data.sh's table format, for --checksums: sizes and SHA-256 of every
archive except dev.tgz and test-full.tgz, whose SHA-256 is left unknown as it is for the real
files, so that get-data.sh trusts them on first use; test-full.tgz gets an MD5 as sacreBLEU lists
one for the real file) and OUT/extra/news-commentary-v14.de-en.tsv.gz: WMT14 ships no TSV corpus
(news-commentary became TSV with v14, WMT19), but nmt-preprocess reads TSV, so the tree has one, in
v14's layout (German first, English second), passed to the recipe as an extra corpus.

The language pair is synthetic and learnable: a fixed word-for-word lexicon (English words to
made-up "German" and "French" words; names and numbers copied) with grammatical reordering
(German: verb last, adverb after the subject; French: adjectives after the noun, adverb after the
verb), so a tiny model learns it in a few hundred updates and a broken pipeline cannot fake it.

The files carry WMT's quirks: SGML with <srcset>/<refset>, <doc docid=... sysid=... origlang=...>,
a <p> wrapper in some documents and not others, <seg id=...>, entities (&amp; &quot; &lt; &#39;),
odd whitespace inside segments (leading, trailing, doubled, tabs); Europarl's empty lines on one
side, CRLF line ends in one corpus, duplicates, noisy Common Crawl pairs (length ratio), a TSV row
with an empty side. Everything is seeded and byte-for-byte reproducible (fixed gzip and tar
times), so the checksums are the same on every run.

Usage: make_mini_wmt.py OUT [--seed N] [--scale F]   (python3, standard library only)
"""

import argparse
import gzip
import hashlib
import io
import os
import random
import sys
import tarfile

# ------------------------------------------------------------------------------------------------
# The lexicon: English words by class. Target words are made from syllables, deterministically.

DETERMINERS = ["the", "a", "this", "every", "my", "our", "their", "no"]
NOUNS = ("cat dog house city river king teacher student doctor farmer baker garden window "
         "letter book road bridge forest mountain village council minister member report "
         "question answer market price company worker child mother father friend neighbour "
         "court judge law vote party station train ship harbour island school church castle "
         "table chair door wall field horse bird fish tree flower apple bread cheese wine "
         "car bicycle computer phone newspaper camera song picture").split()
ADJECTIVES = ("big small old new red green blue happy sad quiet loud young rich poor strong "
              "weak important difficult easy early late dark bright warm cold long short "
              "famous hungry tired clever").split()
VERBS = ("sees builds likes finds buys sells opens closes paints visits helps calls follows "
         "reads writes carries watches meets needs brings loses wins answers cleans "
         "discusses supports").split()
PREPOSITIONS = ["in", "near", "with", "from", "under", "behind", "after", "before"]
ADVERBS = ["today", "often", "never", "quickly", "slowly", "again", "yesterday", "rarely"]
NAMES = ["Anna", "Peter", "Maria", "Jonas", "Lena", "Paul", "Sofia", "Lukas", "Emma", "Felix",
         "Clara", "Hugo", "Nora", "Oskar", "Ida"]
CONJUNCTIONS = {"en": ["and", "but"], "de": ["und", "aber"], "fr": ["et", "mais"]}
FIXED = {  # function words with real-looking fixed translations
    "de": {"the": "der", "a": "ein", "this": "dieser", "every": "jeder", "my": "mein",
           "our": "unser", "their": "ihr", "no": "kein", "in": "in", "near": "bei",
           "with": "mit", "from": "aus", "under": "unter", "behind": "hinter", "after": "nach",
           "before": "vor"},
    "fr": {"the": "le", "a": "un", "this": "ce", "every": "chaque", "my": "mon", "our": "notre",
           "their": "leur", "no": "aucun", "in": "dans", "near": "près", "with": "avec",
           "from": "de", "under": "sous", "behind": "derrière", "after": "après",
           "before": "avant"},
}
SYLLABLES = {
    "de": ["ba", "ken", "lo", "stra", "mi", "dor", "schu", "fel", "wa", "ti", "gen", "ru", "zei",
           "hol", "mar", "ste", "bü", "kla", "nö", "ach"],
    "fr": ["pa", "ré", "lu", "mon", "ci", "tau", "vé", "gro", "li", "sa", "çon", "du", "mè",
           "fi", "bo", "nan", "tri", "ve", "jo", "quel"],
}
ENDINGS = {
    "noun": {"de": ["ung", "er", "e", "heit"], "fr": ["eau", "ion", "age", "ette"]},
    "adj": {"de": ["ig", "lich", "sam"], "fr": ["ique", "eux", "al"]},
    "verb": {"de": ["t", "et"], "fr": ["e", "it"]},
    "adv": {"de": ["s", "mal"], "fr": ["ment"]},
}


def target_word(word, kind, lang):
    """The fixed translation of an English word: syllables chosen by a hash of the word."""
    if word in FIXED[lang]:
        return FIXED[lang][word]
    digest = hashlib.sha256(f"{lang}:{word}".encode()).digest()
    syllables = SYLLABLES[lang]
    stem = "".join(syllables[b % len(syllables)] for b in digest[:2])
    endings = ENDINGS[kind][lang]
    out = stem + endings[digest[6] % len(endings)]
    if lang == "de" and kind == "noun":  # German capitalises nouns
        out = out[0].upper() + out[1:]
    return out


def build_lexicon():
    lexicon = {"de": {}, "fr": {}}
    for kind, words in (("noun", NOUNS), ("adj", ADJECTIVES), ("verb", VERBS), ("adv", ADVERBS),
                        ("det", DETERMINERS), ("prep", PREPOSITIONS)):
        for word in words:
            for lang in ("de", "fr"):
                lexicon[lang][word] = target_word(word, kind, lang)
    for lang in ("de", "fr"):  # a made-up word may collide with another: keep the map one-to-one
        seen = {}
        for word, translated in sorted(lexicon[lang].items()):
            while translated in seen:
                translated += "x"
            seen[translated] = word
            lexicon[lang][word] = translated
    return lexicon


# ------------------------------------------------------------------------------------------------
# Sentences: a clause is subject, verb, object, an optional prepositional phrase and adverb.

class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.lexicon = build_lexicon()

    def noun_phrase(self):
        rng = self.rng
        if rng.random() < 0.15:
            return {"name": rng.choice(NAMES)}
        adjectives = rng.sample(ADJECTIVES, k=rng.choice([0, 0, 1, 1, 2]))
        return {"det": rng.choice(DETERMINERS), "adj": adjectives, "noun": rng.choice(NOUNS)}

    def clause(self):
        rng = self.rng
        clause = {"subj": self.noun_phrase(), "verb": rng.choice(VERBS),
                  "obj": self.noun_phrase()}
        if rng.random() < 0.4:
            clause["pp"] = (rng.choice(PREPOSITIONS), self.noun_phrase())
        if rng.random() < 0.3:
            clause["adv"] = rng.choice(ADVERBS)
        if rng.random() < 0.1:
            clause["number"] = str(rng.randint(2, 2020))
        return clause

    def sentence(self):
        """One sentence as a structure; render() writes it in a language."""
        rng = self.rng
        clauses = [self.clause()]
        if rng.random() < 0.2:
            clauses.append(self.clause())
        return {"clauses": clauses, "conj": rng.randrange(2), "end": rng.choice(".....?!"),
                "quoted": rng.random() < 0.08, "amp": rng.random() < 0.04}

    def render_np(self, np, lang):
        if "name" in np:
            return [np["name"]]
        if lang == "en":
            return [np["det"], *np["adj"], np["noun"]]
        words = self.lexicon[lang]
        det, noun = words[np["det"]], words[np["noun"]]
        adjectives = [words[a] for a in np["adj"]]
        if lang == "de":
            return [det, *adjectives, noun]
        return [det, noun, *adjectives]  # French: adjectives follow the noun

    def render_clause(self, clause, lang):
        words = self.lexicon.get(lang, {})
        subj = self.render_np(clause["subj"], lang)
        obj = self.render_np(clause["obj"], lang)
        verb = clause["verb"] if lang == "en" else words[clause["verb"]]
        pp = []
        if "pp" in clause:
            prep, np = clause["pp"]
            pp = [prep if lang == "en" else words[prep], *self.render_np(np, lang)]
        adv = []
        if "adv" in clause:
            adv = [clause["adv"] if lang == "en" else words[clause["adv"]]]
        number = [clause["number"]] if "number" in clause else []
        if lang == "en":
            return subj + [verb] + obj + number + pp + adv
        if lang == "de":  # the adverb after the subject, the verb last
            return subj + adv + obj + number + pp + [verb]
        return subj + [verb] + adv + obj + number + pp  # French: the adverb after the verb

    def render(self, sentence, lang):
        parts = []
        for i, clause in enumerate(sentence["clauses"]):
            if i > 0:
                parts += [",", CONJUNCTIONS[lang][sentence["conj"]]]
            parts += self.render_clause(clause, lang)
        if sentence["amp"]:  # a company name with an ampersand, copied as is
            parts += ["&", "Co"]
        text = " ".join(parts).replace(" ,", ",")
        text = text[0].upper() + text[1:] + sentence["end"]
        if sentence["quoted"]:
            quotes = {"en": ('"', '"'), "de": ("„", "“"), "fr": ("« ", " »")}[lang]
            text = quotes[0] + text + quotes[1]
        return text

    def pairs(self, count, target):
        out = []
        for _ in range(count):
            sentence = self.sentence()
            out.append((self.render(sentence, "en"), self.render(sentence, target)))
        return out


# ------------------------------------------------------------------------------------------------
# Formats: plain text, gzip, SGML, TSV; archives.

def plain(lines, crlf=False):
    end = "\r\n" if crlf else "\n"
    return "".join(line + end for line in lines).encode("utf-8")


def gz(data):
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as f:  # fixed time: stable checksums
        f.write(data)
    return buffer.getvalue()


def escape(text, rng):
    """SGML entities as WMT files carry them (some quotes stay literal, as in real files)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if rng.random() < 0.7:
        text = text.replace('"', "&quot;")
    return text.replace("'", "&#39;")


def odd_whitespace(text, rng):
    roll = rng.random()
    if roll < 0.05:
        return "  " + text
    if roll < 0.10:
        return text + " \t"
    if roll < 0.15:
        return text.replace(" ", "  ", 1)
    if roll < 0.18:
        return text.replace(" ", "\t", 1)
    return text


def sgml(kind, setid, lang, docs, rng_seed):
    """A WMT newstest file: kind srcset or refset; docs [(docid, origlang, with_p, [text])]."""
    rng = random.Random(rng_seed)  # the same quirks for the same set, whatever the side
    if kind == "srcset":
        lines = [f'<srcset setid="{setid}" srclang="any">']
    else:
        lines = [f'<refset setid="{setid}" srclang="any" trglang="{lang}">']
    sysid = "ref" if kind == "refset" else "src"
    for docid, origlang, with_p, segments in docs:
        lines.append(f'<doc sysid="{sysid}" docid="{docid}" genre="news" origlang="{origlang}">')
        if with_p:
            lines.append("<p>")
        for number, text in enumerate(segments, start=1):
            lines.append(f'<seg id="{number}">{odd_whitespace(escape(text, rng), rng)}</seg>')
        if with_p:
            lines.append("</p>")
        lines.append("</doc>")
    lines.append(f"</{kind}>")
    return plain(lines)


def documents(pairs, name, rng):
    """Split pairs into documents of 10-40 segments; alternately with and without <p>."""
    docs, start = [], 0
    while start < len(pairs):
        size = rng.randint(10, 40)
        chunk = pairs[start:start + size]
        origlang = rng.choice(["en", "de", "fr", "cs"])
        docs.append((f"{name}-doc{len(docs) + 1}.{origlang}", origlang, len(docs) % 2 == 0,
                     chunk))
        start += size
    return docs


def archive(members, compress):
    """A tar (gzip'd when compress) of {path: bytes}, with fixed metadata: stable checksums."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        directories = sorted({os.path.dirname(p) for p in members if os.path.dirname(p)})
        for directory in directories:
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1400000000
            tar.addfile(info)
        for path in sorted(members):
            data = members[path]
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, 1400000000
            tar.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    return gz(data) if compress else data


def with_noise(pairs, rng, empty=0, noisy=0, duplicates=0):
    """Europarl's empty lines on one side, Common Crawl's junk pairs, repeated pairs."""
    pairs = list(pairs)
    for _ in range(empty):
        i = rng.randrange(len(pairs))
        src, tgt = pairs[i]
        pairs[i] = ("", tgt) if rng.random() < 0.5 else (src, "")
    for _ in range(noisy):  # a sentence against a page of navigation text: length ratio
        i = rng.randrange(len(pairs))
        pairs[i] = ("Home", " ".join(["Impressum | Kontakt | Datenschutz"] * 6))
    for _ in range(duplicates):
        pairs.insert(rng.randrange(len(pairs)), pairs[rng.randrange(len(pairs))])
    return pairs


def sides(pairs):
    return [p[0] for p in pairs], [p[1] for p in pairs]


# ------------------------------------------------------------------------------------------------

def build(out, seed, scale):
    rng = random.Random(seed)
    gen = {"de": Generator(seed * 10 + 1), "fr": Generator(seed * 10 + 2)}

    def n(count):
        return max(20, int(count * scale))

    files = {}
    # Training corpora, per archive.
    europarl = {}
    for lang, count in (("de", 1500), ("fr", 900)):
        en, tgt = sides(with_noise(gen[lang].pairs(n(count), lang), rng, empty=6, duplicates=5))
        europarl[f"training/europarl-v7.{lang}-en.en"] = plain(en)
        europarl[f"training/europarl-v7.{lang}-en.{lang}"] = plain(tgt)
    files["training-parallel-europarl-v7.tgz"] = archive(europarl, compress=True)

    crawl = {}
    for lang, count in (("de", 700), ("fr", 400)):
        en, tgt = sides(with_noise(gen[lang].pairs(n(count), lang), rng, noisy=5, duplicates=8))
        crawl[f"commoncrawl.{lang}-en.en"] = plain(en, crlf=True)  # Windows line ends
        crawl[f"commoncrawl.{lang}-en.{lang}"] = plain(tgt, crlf=True)
    files["training-parallel-commoncrawl.tgz"] = archive(crawl, compress=True)

    nc = {}
    for lang, count in (("de", 500), ("fr", 300)):
        en, tgt = sides(gen[lang].pairs(n(count), lang))
        nc[f"training/news-commentary-v9.{lang}-en.en"] = plain(en)
        nc[f"training/news-commentary-v9.{lang}-en.{lang}"] = plain(tgt)
    files["training-parallel-nc-v9.tgz"] = archive(nc, compress=True)

    en, fr = sides(gen["fr"].pairs(n(400), "fr"))
    files["training-parallel-un.tgz"] = archive(
        {"un/undoc.2000.fr-en.en": plain(en), "un/undoc.2000.fr-en.fr": plain(fr)}, compress=True)

    en, fr = sides(with_noise(gen["fr"].pairs(n(600), "fr"), rng, noisy=3))
    files["training-giga-fren.tar"] = archive(
        {"giga-fren.release2.fixed.en.gz": gz(plain(en)),
         "giga-fren.release2.fixed.fr.gz": gz(plain(fr))}, compress=False)

    # newstest2013 (dev) and newstest2014 (test): the same English source for both pairs, as WMT.
    dev, test = {}, {}
    dev_sentences = [gen["de"].sentence() for _ in range(n(150))]
    test_sentences = [gen["de"].sentence() for _ in range(n(200))]
    for store, setid, sentences, layout in (
            (dev, "newstest2013", dev_sentences, "dev/newstest2013-{kind}.{lang}.sgm"),
            (test, "newstest2014", test_sentences, "test-full/newstest2014-{pair}-{kind}.{lang}.sgm")):
        for lang in ("de", "fr"):
            renders = [(gen["de"].render(s, "en"), gen["de"].render(s, lang)) for s in sentences]
            doc_rng = random.Random(f"{setid}-docs")
            docs = documents(renders, setid, doc_rng)
            pair = f"{lang}en"
            src_docs = [(d, o, p, [s for s, _ in segs]) for d, o, p, segs in docs]
            ref_docs = [(d, o, p, [t for _, t in segs]) for d, o, p, segs in docs]
            quirk_seed = f"{setid}-{lang}-quirks"
            store[layout.format(kind="src", lang="en", pair=pair)] = sgml(
                "srcset", setid, "en", src_docs, quirk_seed)
            store[layout.format(kind="ref", lang=lang, pair=pair)] = sgml(
                "refset", setid, lang, ref_docs, quirk_seed)
            if setid == "newstest2013":  # WMT's dev.tgz also holds plain-text copies
                store[f"dev/newstest2013.{lang}"] = plain(t for _, t in renders)
                store["dev/newstest2013.en"] = plain(s for s, _ in renders)
    files["dev.tgz"] = archive(dev, compress=True)
    files["test-full.tgz"] = archive(test, compress=True)

    mirror = os.path.join(out, "mirror")
    os.makedirs(mirror, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(mirror, name), "wb") as f:
            f.write(data)

    # The extra TSV corpus (news-commentary v14's layout: German, then English).
    rows = [f"{de}\t{en}" for en, de in gen["de"].pairs(n(300), "de")]
    rows[len(rows) // 2] = rows[len(rows) // 2].split("\t")[0] + "\t"  # an empty English side
    os.makedirs(os.path.join(out, "extra"), exist_ok=True)
    with open(os.path.join(out, "extra", "news-commentary-v14.de-en.tsv.gz"), "wb") as f:
        f.write(gz(plain(rows)))

    # get-data.sh's table, for these files: dev.tgz and test-full.tgz without SHA-256 (as for the
    # real ones), test-full.tgz with an MD5 (as sacreBLEU lists one for the real one).
    with open(os.path.join(out, "checksums.txt"), "w", encoding="utf-8") as f:
        f.write("# name size sha256 md5 url (make_mini_wmt.py; '-': unknown)\n")
        for name, data in sorted(files.items()):
            sha = "-" if name in ("dev.tgz", "test-full.tgz") else hashlib.sha256(data).hexdigest()
            md5 = hashlib.md5(data).hexdigest() if name == "test-full.tgz" else "-"
            f.write(f"{name} {len(data)} {sha} {md5} https://mini.invalid/wmt/{name}\n")
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="output folder (mirror/, extra/, checksums.txt)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scale", type=float, default=1.0, help="corpus sizes times this")
    args = parser.parse_args()
    files = build(args.out, args.seed, args.scale)
    total = sum(len(d) for d in files.values())
    print(f"make_mini_wmt.py: {len(files)} archives ({total} bytes) in "
          f"{os.path.join(args.out, 'mirror')}, checksums in {os.path.join(args.out, 'checksums.txt')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
