// The HDF5 layer under shards and checkpoints: typed 1-D datasets, nested groups, attributes,
// chunked compression, and errors that name the file and the object.

#include "common/hdf5_file.h"

#include <filesystem>

#include "test_utils.h"

namespace nmt {
namespace {

using testing::TempDir;

TEST(Hdf5File, RoundTripsDatasetsAndAttributes) {
  TempDir dir;
  const auto path = dir.file("round_trip.h5");
  const std::vector<std::int32_t> tokens = {5, 17, 3, 0, -2, 2147483647};
  const std::vector<std::int64_t> offsets = {0, 2, 6};
  std::vector<float> weights(10000);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = 0.5f * static_cast<float>(i);
  {
    Hdf5Writer file(path);
    file.write("/train/src/tokens", tokens);
    file.write("/train/src/offsets", offsets);
    file.write("/params/weight", weights, /*chunk=*/4096);
    file.set_attribute("/", "format", std::string("nmt-shard"));
    file.set_attribute("/", "version", std::int64_t{3});
    file.set_attribute("/train", "ratio", 1.5);
    file.set_attribute("/train/src/tokens", "note", std::string("UTF-8 ✓ äöü"));
    file.save(path);
  }
  Hdf5Reader file(path);
  EXPECT_EQ(file.read<std::int32_t>("/train/src/tokens"), tokens);
  EXPECT_EQ(file.read<std::int64_t>("/train/src/offsets"), offsets);
  EXPECT_EQ(file.read<float>("/params/weight"), weights);
  EXPECT_EQ(file.length("/params/weight"), weights.size());
  EXPECT_EQ(file.string_attribute("/", "format"), "nmt-shard");
  EXPECT_EQ(file.int_attribute("/", "version"), 3);
  EXPECT_DOUBLE_EQ(file.double_attribute("/train", "ratio"), 1.5);
  EXPECT_EQ(file.string_attribute("/train/src/tokens", "note"), "UTF-8 ✓ äöü");
  EXPECT_TRUE(file.exists("/train/src"));
  EXPECT_FALSE(file.exists("/train/tgt/tokens"));
}

TEST(Hdf5File, EmptyDatasetRoundTrips) {
  TempDir dir;
  const auto path = dir.file("empty.h5");
  {
    Hdf5Writer file(path);
    file.write("/empty", std::vector<double>{}, 16);
    file.save(path);
  }
  EXPECT_TRUE(Hdf5Reader(path).read<double>("/empty").empty());
}

TEST(Hdf5File, ErrorsNameFileAndObject) {
  TempDir dir;
  const auto path = dir.file("errors.h5");
  {
    Hdf5Writer file(path);
    file.write("/ints", std::vector<std::int32_t>{1, 2});
    file.set_attribute("/", "ratio", 0.5);
    file.save(path);
  }
  Hdf5Reader file(path);
  NMT_EXPECT_THROW_WITH(file.read<std::int32_t>("/missing"), Hdf5Error, "errors.h5", "'/missing'");
  NMT_EXPECT_THROW_WITH(file.read<float>("/ints"), Hdf5Error, "'/ints'", "element type");
  NMT_EXPECT_THROW_WITH(file.int_attribute("/", "ratio"), Hdf5Error, "'ratio'", "not an integer");
  NMT_EXPECT_THROW_WITH(file.string_attribute("/", "absent"), Hdf5Error, "no attribute 'absent'");
}

TEST(Hdf5File, RejectsMissingAndTruncatedFiles) {
  TempDir dir;
  NMT_EXPECT_THROW_WITH(Hdf5Reader(dir.file("nope.h5")), Hdf5Error, "nope.h5", "cannot open");
  const auto path = dir.file("cut.h5");
  {
    Hdf5Writer file(path);
    file.write("/big", std::vector<double>(100000, 1.0));
    file.save(path);
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  EXPECT_THROW(
      {
        Hdf5Reader file(path);
        file.read<double>("/big");
      },
      Hdf5Error);
}

}  // namespace
}  // namespace nmt
