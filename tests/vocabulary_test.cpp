// The joint SentencePiece vocabulary: trained on generated text, fixed special ids, exact
// encode/decode round trip, stable checksum, and clear errors for foreign or broken models.

#include "preprocess/vocabulary.h"

#include <thread>

#include "common/atomic_file.h"
#include "common/sha256.h"
#include "test_utils.h"

namespace nmt::preprocess {
namespace {

using testing::TempDir;

// Deterministic pseudo-sentences over a small lexicon, both "languages" mixed as in a joint
// vocabulary.
std::vector<std::string> generate_corpus(int lines) {
  const std::vector<std::string> words = {"the",    "a",       "dog",     "runs",   "across",
                                          "green",  "field",   "der",     "ein",    "Hund",
                                          "läuft",  "über",    "grüne",   "Wiese",  "children",
                                          "Kinder", "playing", "spielen", "street", "Straße"};
  std::vector<std::string> corpus;
  std::uint32_t state = 12345;
  for (int i = 0; i < lines; ++i) {
    std::string line;
    const int length = 3 + i % 9;
    for (int w = 0; w < length; ++w) {
      state = state * 1664525u + 1013904223u;
      if (w) line += ' ';
      line += words[(state >> 16) % words.size()];
    }
    corpus.push_back(line + (i % 3 == 0 ? "." : ""));
  }
  return corpus;
}

VocabularyOptions small_options(const std::string& type) {
  VocabularyOptions options;
  options.model_type = type;
  options.vocab_size = 60;
  return options;
}

TEST(Vocabulary, BpeTrainEncodeDecodeRoundTrip) {
  const auto corpus = generate_corpus(2000);
  const auto vocab =
      Vocabulary::from_serialized(train_vocabulary(corpus, small_options("bpe")), "bpe");
  EXPECT_EQ(vocab.size(), 60);
  EXPECT_EQ(vocab.piece(kPadId), "<pad>");
  EXPECT_EQ(vocab.piece(kUnkId), "<unk>");
  EXPECT_EQ(vocab.piece(kBosId), "<s>");
  EXPECT_EQ(vocab.piece(kEosId), "</s>");
  for (int i = 0; i < 200; ++i) {
    const auto ids = vocab.encode(corpus[i]);
    ASSERT_FALSE(ids.empty());
    for (auto id : ids) {
      EXPECT_GT(id, kEosId) << corpus[i];
      EXPECT_LT(id, vocab.size());
    }
    EXPECT_EQ(vocab.decode(ids), corpus[i]);
  }
  // Subwords really merge: a frequent word costs fewer pieces than characters.
  EXPECT_LT(vocab.encode("children").size(), std::string("children").size());
}

TEST(Vocabulary, UnigramAndDecodeSkipsSpecialIds) {
  const auto corpus = generate_corpus(2000);
  const auto vocab =
      Vocabulary::from_serialized(train_vocabulary(corpus, small_options("unigram")), "unigram");
  auto ids = vocab.encode("der Hund läuft");
  ids.insert(ids.begin(), kBosId);
  ids.push_back(kEosId);
  ids.push_back(kPadId);
  EXPECT_EQ(vocab.decode(ids), "der Hund läuft");
}

TEST(Vocabulary, SaveLoadKeepsChecksumAndIds) {
  TempDir dir;
  const auto corpus = generate_corpus(1000);
  const auto model = train_vocabulary(corpus, small_options("bpe"));
  const auto path = dir.file("spm.model");
  write_file_atomically(path, model);
  const auto loaded = Vocabulary::load(path);
  const auto direct = Vocabulary::from_serialized(model, "direct");
  EXPECT_EQ(loaded.sha256(), direct.sha256());
  EXPECT_EQ(loaded.sha256().size(), 64u);
  EXPECT_EQ(loaded.encode(corpus[5]), direct.encode(corpus[5]));
  // Training is deterministic for a fixed seed: the same model bytes again.
  EXPECT_EQ(sha256_hex(train_vocabulary(corpus, small_options("bpe"))), loaded.sha256());
}

TEST(Vocabulary, CachedEncoderGivesExactlyTheSameIds) {
  auto corpus = generate_corpus(3000);
  // Characters that NFKC rewrites (ligature, full-width, diaeresis with a space in its
  // decomposition, superscript), unknown characters, and text that is not whitespace-normalised.
  const std::vector<std::string> tricky = {
      "ﬁeld Ｈｕｎｄ ¨a x² ½", "the dog ☃ läuft",      "  leading", "trailing ", "two  spaces", "",
      "ümlaut Über ÄÖÜ ß",     "der der der Hund Hund"};
  corpus.insert(corpus.end(), tricky.begin(), tricky.end());
  for (const char* type : {"bpe", "unigram"}) {
    const auto vocab = Vocabulary::from_serialized(
        train_vocabulary(generate_corpus(2000), small_options(type)), type);
    CachedEncoder encoder(vocab);
    CachedEncoder tiny(vocab, /*max_entries=*/4);  // evicts constantly
    std::vector<std::int32_t> ids, tiny_ids;
    for (const auto& sentence : corpus) {
      encoder.encode(sentence, ids);
      tiny.encode(sentence, tiny_ids);
      ASSERT_EQ(ids, vocab.encode(sentence)) << type << ": '" << sentence << "'";
      ASSERT_EQ(tiny_ids, ids) << type << ": '" << sentence << "'";
    }
    EXPECT_GT(encoder.hits(), 10 * encoder.misses()) << type;
  }
}

// Subword regularization: every sampled segmentation is a segmentation of the same text, it is a
// function of (text, alpha, seed) alone, whatever ran before it on whichever thread, and it really
// varies: BPE-dropout skips merges, so its segmentations are longer than the deterministic one.
TEST(Vocabulary, SampledSegmentationsDecodeToTheTextAndDependOnlyOnTheSeed) {
  const auto corpus = generate_corpus(300);
  for (const char* type : {"bpe", "unigram"}) {
    const auto vocab = Vocabulary::from_serialized(
        train_vocabulary(generate_corpus(2000), small_options(type)), type);
    std::vector<std::vector<std::int32_t>> first;
    std::size_t deterministic_pieces = 0, sampled_pieces = 0;
    int differ = 0;
    for (std::size_t i = 0; i < corpus.size(); ++i) {
      const auto ids = vocab.sample_encode(corpus[i], 0.1, 1000 + i);
      ASSERT_EQ(vocab.decode(ids), corpus[i]) << type;
      const auto plain = vocab.encode(corpus[i]);
      differ += ids != plain;
      deterministic_pieces += plain.size();
      sampled_pieces += ids.size();
      first.push_back(ids);
    }
    EXPECT_GT(differ, 30) << type;
    if (std::string(type) == "bpe") {
      EXPECT_GT(sampled_pieces, deterministic_pieces);
    }
    // Another seed gives other segmentations; the same seeds, on a new thread after other
    // sampling on this one, give the same ones again.
    int differ_by_seed = 0;
    for (std::size_t i = 0; i < corpus.size(); ++i) {
      differ_by_seed += vocab.sample_encode(corpus[i], 0.1, 7) != first[i];
    }
    EXPECT_GT(differ_by_seed, 30) << type;
    std::vector<std::vector<std::int32_t>> again(corpus.size());
    std::thread([&] {
      for (std::size_t i = corpus.size(); i-- > 0;) {
        again[i] = vocab.sample_encode(corpus[i], 0.1, 1000 + i);
      }
    }).join();
    EXPECT_EQ(again, first) << type;
  }
  SamplingOptions sampling;
  sampling.copies = 2;
  sampling.alpha = 0.0;
  NMT_EXPECT_THROW_WITH(sampling.validate(), std::invalid_argument, "sampling.alpha");
  sampling.copies = -1;
  NMT_EXPECT_THROW_WITH(sampling.validate(), std::invalid_argument, "sampling.copies");
}

TEST(Vocabulary, KnownSha256) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Vocabulary, ClearErrors) {
  TempDir dir;
  NMT_EXPECT_THROW_WITH(Vocabulary::load(dir.file("none.model")), std::runtime_error, "none.model",
                        "cannot open");
  testing::write_text(dir.file("bad.model"), "not a protobuf at all");
  NMT_EXPECT_THROW_WITH(Vocabulary::load(dir.file("bad.model")), std::runtime_error, "bad.model",
                        "not a valid SentencePiece model");
  auto options = small_options("wordpiece");
  NMT_EXPECT_THROW_WITH(train_vocabulary(generate_corpus(10), options), std::invalid_argument,
                        "'bpe' or 'unigram'");
  NMT_EXPECT_THROW_WITH(train_vocabulary({}, small_options("bpe")), std::invalid_argument,
                        "no sentences");
}

}  // namespace
}  // namespace nmt::preprocess
