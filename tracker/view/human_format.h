#pragma once
// Numbers and times as nmt-tracker prints them for people (issue 18): significant digits instead
// of 17-digit floats, counts with thousands separators, UTC times in ISO 8601, durations in the
// units a person reads ("1h 02m"), byte sizes, and the labels of axis ticks. Every function is
// deterministic and independent of the C and C++ locales (fmt without the 'L' flag, and UTC).

#include <cstdint>
#include <string>
#include <string_view>

namespace nmt::tracker {

// `value` to `significant` (1..17) significant digits, trailing zeros dropped: plain notation for
// 1e-3 <= |value| < 1e6 ("4.921", "0.001", "123457": integer digits are never rounded away),
// scientific otherwise ("1.234e-04", "2.5e+07"); "0" for either zero; "nan", "inf", "-inf". Never
// more digits than the shortest text that reads back as `value` (1e-5 is "1e-05" at 17 digits).
// Rounding happens before the choice, so 999999.7 prints "1e+06". std::invalid_argument when
// `significant` is out of range.
std::string format_number(double value, int significant = 4);

// An integer count with a comma every three digits: 1234567 -> "1,234,567", -1000 -> "-1,000".
std::string format_count(std::int64_t value);

// A count and its noun in the form the count takes: (1, "thread") -> "1 thread", (2, "thread") ->
// "2 threads", (0, "run") -> "0 runs", (1500, "point") -> "1,500 points"; `plural` for nouns that
// do not just add "s" ((2, "entry", "entries") -> "2 entries").
std::string format_quantity(std::int64_t count, std::string_view singular,
                            std::string_view plural = {});

// UNIX seconds as an ISO 8601 UTC time to the second, "2024-05-01T12:34:56Z" (fractions are
// truncated toward the past, so a time never prints later than it happened). UTC rather than local
// time: the same on every machine of a cluster and in every log. "-" when not finite or outside
// the years 0000..9999.
std::string format_utc_time(double unix_seconds);

// An elapsed time in the largest units that fit, rounded to the smaller unit: "250 ms" below 1 s,
// "12.3 s" below a minute, "3m 05s" below an hour, "1h 02m" below a day, then "2d 03h". Negative
// durations get a leading '-'; "-" when not finite.
std::string format_duration(double seconds);

// A duration rounded to whole seconds, in its largest non-zero unit and the next one when that is
// not zero (the rest is dropped): the shorter style of axis ticks. 0 -> "0s", 90 -> "1m 30s",
// 3600 -> "1h", 5400 -> "1h 30m", 129600 -> "1d 12h". Below one second and non-zero it is
// format_number(seconds) + " s"; "-" when not finite.
std::string format_duration_compact(double seconds);

// Bytes in binary units with three significant digits: "512 B", "1.50 KiB", "12.3 MiB", "1.00 GiB".
std::string format_bytes(std::uint64_t bytes);

// The label of an axis tick `value` on a grid of spacing `step` (> 0, else
// std::invalid_argument): as many decimals as `step` needs, the same for every tick of the grid
// ("0.25", "0.50"); from a step of 1000 on, the k/M/G/T suffix of the largest 1000^n up to twice
// the step ("5k, 10k", "100k, 200k", "0.5M, 1M"); scientific for steps below 1e-3 or from 1e15 on
// ("5e-04", "1.5e-04"). SI prefixes are for large magnitudes only (steps, tokens, tokens per
// second: counts); a small value such as a learning rate never reads "3.5m" or "500µ"; exactly "0"
// for a tick at zero, also one that floating-point error moved a little off it.
std::string format_tick(double value, double step);

}  // namespace nmt::tracker
