#pragma once
// Quantities written out with their unit, as in scenario files and --set:
//   durations: "250ns", "5us", "1.5ms", "2s"      (also "µs")
//   sizes:     "512B", "64KB", "64KiB", "1.5GB", "2GiB"  (decimal kB/MB/GB/TB, binary KiB/MiB/GiB/TiB)
//   rates:     "12GB/s", "900MiB/s", "100Gb/s", "10Gbit/s", "400Gbps"  (bytes or bits per second)
// A bare number, an unknown unit, a negative value, or trailing text is an
// error; the parsers throw std::invalid_argument with a message saying which
// units are accepted. Callers add the file, line and key.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"

namespace ssgd {

Duration parse_duration(std::string_view text);
std::int64_t parse_bytes(std::string_view text);
double parse_rate_bytes_per_s(std::string_view text);

// Human-readable forms for summaries: "1.234 ms", "25.0 GB/s", "97.5 MiB".
std::string format_duration(Duration d);
std::string format_bytes(std::int64_t bytes);
std::string format_rate(double bytes_per_s);

// A size as a scenario or calibration file writes it, exactly: in the
// largest binary unit that divides it ("16MiB", "3TiB"), else in bytes
// ("1000B", "0B"); parse_bytes reads it back equal.
std::string exact_bytes_text(std::int64_t bytes);

// The items of a list separated by `separator` (a comma unless said), as
// written (no trimming): "a,b" -> {"a", "b"}; "" -> {""}; "a," -> {"a", ""}.
// Callers parse and check each.
std::vector<std::string_view> split_list(std::string_view text, char separator = ',');

}  // namespace ssgd
