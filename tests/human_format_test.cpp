// Numbers and times for people (tracker/view/human_format.h): significant digits with the switch
// to scientific notation at 1e-3 and 1e6 (after rounding), thousands separators, ISO 8601 UTC,
// durations that roll over to the next unit when rounding reaches it, byte sizes, tick labels
// that tell neighbours apart. The same text whatever the process locale says.

#include <gtest/gtest.h>

#include <clocale>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tracker/view/human_format.h"

namespace nmt::tracker {
namespace {

TEST(HumanFormat, NumbersKeepFourSignificantDigitsInPlainRange) {
  EXPECT_EQ(format_number(4.92136), "4.921");
  EXPECT_EQ(format_number(25.0), "25");
  EXPECT_EQ(format_number(0.5), "0.5");
  EXPECT_EQ(format_number(-3.14159), "-3.142");
  EXPECT_EQ(format_number(0.001), "0.001");
  EXPECT_EQ(format_number(0.00123456), "0.001235");
  EXPECT_EQ(format_number(123456.7), "123457");  // integer digits are not rounded away
  EXPECT_EQ(format_number(0.0), "0");
  EXPECT_EQ(format_number(-0.0), "0");
}

TEST(HumanFormat, NumbersOutsidePlainRangeAreScientific) {
  EXPECT_EQ(format_number(0.0001234), "1.234e-04");
  EXPECT_EQ(format_number(0.00099), "9.9e-04");
  EXPECT_EQ(format_number(25000000.0), "2.5e+07");
  EXPECT_EQ(format_number(-1e-300), "-1e-300");
  EXPECT_EQ(format_number(1e6), "1e+06");
}

TEST(HumanFormat, RoundingDecidesTheNotation) {
  EXPECT_EQ(format_number(999999.7), "1e+06");  // 7 integer digits after rounding
  EXPECT_EQ(format_number(0.00099996), "0.001");
  EXPECT_EQ(format_number(9.99996), "10");
  EXPECT_EQ(format_number(0.123456, 2), "0.12");
  // At most the shortest round trip: the 17th digit of "0.33333333333333331" is binary noise.
  EXPECT_EQ(format_number(1.0 / 3, 17), "0.3333333333333333");
}

TEST(HumanFormat, NonFiniteNumbersAndBadDigits) {
  EXPECT_EQ(format_number(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_number(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_THROW(format_number(1.0, 0), std::invalid_argument);
  EXPECT_THROW(format_number(1.0, 18), std::invalid_argument);
}

TEST(HumanFormat, CountsHaveThousandsSeparators) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1000), "1,000");
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_count(-1000), "-1,000");
  EXPECT_EQ(format_count(std::numeric_limits<std::int64_t>::min()), "-9,223,372,036,854,775,808");
}

TEST(HumanFormat, TimesAreIsoUtc) {
  EXPECT_EQ(format_utc_time(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_utc_time(1714566896.9), "2024-05-01T12:34:56Z");  // fractions truncated
  EXPECT_EQ(format_utc_time(-0.5), "1969-12-31T23:59:59Z");          // toward the past
  EXPECT_EQ(format_utc_time(951782400), "2000-02-29T00:00:00Z");     // leap day
  EXPECT_EQ(format_utc_time(253402300799.0), "9999-12-31T23:59:59Z");
  EXPECT_EQ(format_utc_time(253402300800.0), "-");
  EXPECT_EQ(format_utc_time(std::numeric_limits<double>::quiet_NaN()), "-");
}

TEST(HumanFormat, DurationsUseTheLargestUnitsThatFit) {
  EXPECT_EQ(format_duration(0), "0 ms");
  EXPECT_EQ(format_duration(0.25), "250 ms");
  EXPECT_EQ(format_duration(12.34), "12.3 s");
  EXPECT_EQ(format_duration(185), "3m 05s");
  EXPECT_EQ(format_duration(3725), "1h 02m");
  EXPECT_EQ(format_duration(2 * 86400 + 3 * 3600 + 10), "2d 03h");
  EXPECT_EQ(format_duration(-185), "-3m 05s");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "-");
}

TEST(HumanFormat, DurationsRollOverWhenRoundingReachesTheNextUnit) {
  EXPECT_EQ(format_duration(0.9996), "1.0 s");
  EXPECT_EQ(format_duration(59.96), "1m 00s");
  EXPECT_EQ(format_duration(3599.6), "1h 00m");
  EXPECT_EQ(format_duration(86399.0 * 1 + 0.9), "1d 00h");
}

TEST(HumanFormat, CompactDurationsForTicks) {
  EXPECT_EQ(format_duration_compact(0), "0s");
  EXPECT_EQ(format_duration_compact(45), "45s");
  EXPECT_EQ(format_duration_compact(90), "1m 30s");
  EXPECT_EQ(format_duration_compact(3600), "1h");
  EXPECT_EQ(format_duration_compact(3601), "1h");  // two units at most
  EXPECT_EQ(format_duration_compact(5400), "1h 30m");
  EXPECT_EQ(format_duration_compact(129600), "1d 12h");
  EXPECT_EQ(format_duration_compact(0.5), "0.5 s");
  EXPECT_EQ(format_duration_compact(-60), "-1m");
}

TEST(HumanFormat, BytesInBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(12900000), "12.3 MiB");
  EXPECT_EQ(format_bytes(1048575), "1.00 MiB");  // 1023.999 KiB rounds into the next unit
  EXPECT_EQ(format_bytes(1ULL << 30), "1.00 GiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<std::uint64_t>::max()), "16.0 EiB");
}

TEST(HumanFormat, TickLabelsFollowTheStep) {
  EXPECT_EQ(format_tick(0.25, 0.05), "0.25");
  EXPECT_EQ(format_tick(0.5, 0.05), "0.50");  // the same decimals on the whole axis
  EXPECT_EQ(format_tick(0.30000000000000004, 0.1), "0.3");
  EXPECT_EQ(format_tick(1e-17, 0.1), "0");  // floating-point dust at zero
  EXPECT_EQ(format_tick(-2.5, 0.5), "-2.5");
  EXPECT_EQ(format_tick(10002, 2), "10002");  // neighbours 10000, 10002 stay distinct
  EXPECT_EQ(format_tick(25000, 5000), "25k");
  EXPECT_EQ(format_tick(300000, 100000), "300k");
  EXPECT_EQ(format_tick(1500000, 500000), "1.5M");
  EXPECT_EQ(format_tick(0.00015, 0.00005), "1.5e-04");
  EXPECT_EQ(format_tick(2e15, 1e15), "2e+15");
  EXPECT_THROW(format_tick(1, 0), std::invalid_argument);
}

// Learning rates and other small values: scientific or plain, never an SI prefix ("3.5m", "500µ");
// the k/M suffixes stay for large magnitudes (steps, tokens), which are counts.
TEST(HumanFormat, SmallValuesNeverTakeSiPrefixes) {
  for (const auto& [value, step] : std::vector<std::pair<double, double>>{
           {0.0035, 0.0005}, {0.0005, 0.0001}, {0.003, 1e-3}, {2e-6, 1e-6}, {0.0015, 0.0005}}) {
    const std::string tick = format_tick(value, step);
    EXPECT_EQ(tick.find_first_of("mµu"), std::string::npos) << value << " -> " << tick;
    EXPECT_DOUBLE_EQ(std::stod(tick), value) << tick;
  }
  EXPECT_EQ(format_tick(0.0035, 0.0005), "3.5e-03");
  EXPECT_EQ(format_tick(0.0005, 0.0001), "5e-04");
  EXPECT_EQ(format_tick(0.004, 0.001), "0.004");
  EXPECT_EQ(format_number(0.0035), "0.0035");
  EXPECT_EQ(format_number(0.0005), "5e-04");
  EXPECT_EQ(format_number(1e-5), "1e-05");
  EXPECT_EQ(format_number(1.0000000000000001e-05, 17), "1e-05");  // the same double, shortest
  EXPECT_EQ(format_tick(2e6, 1e6), "2M");  // a count of tokens keeps its suffix
}

TEST(HumanFormat, QuantitiesTakeTheNounsNumber) {
  EXPECT_EQ(format_quantity(1, "thread"), "1 thread");
  EXPECT_EQ(format_quantity(2, "thread"), "2 threads");
  EXPECT_EQ(format_quantity(0, "run"), "0 runs");
  EXPECT_EQ(format_quantity(1500, "point"), "1,500 points");
  EXPECT_EQ(format_quantity(1, "entry", "entries"), "1 entry");
  EXPECT_EQ(format_quantity(3, "entry", "entries"), "3 entries");
}

TEST(HumanFormat, IndependentOfTheProcessLocale) {
  // A locale with a decimal comma, when the machine has one; the C locale otherwise (then this
  // only repeats the checks above).
  const char* chosen = std::setlocale(LC_ALL, "de_DE.UTF-8");
  EXPECT_EQ(format_number(4.92136), "4.921");
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_duration(12.34), "12.3 s");
  EXPECT_EQ(format_tick(0.25, 0.05), "0.25");
  std::setlocale(LC_ALL, "C");
  if (chosen == nullptr) {
    GTEST_SKIP() << "no de_DE.UTF-8 locale here; checked under the C locale only";
  }
}

}  // namespace
}  // namespace nmt::tracker
