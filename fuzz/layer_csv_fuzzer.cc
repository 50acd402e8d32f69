// Fuzz target: the layer-profile CSV (traces/layer_profile.h).
//
// Promise: parse_layer_profile_csv returns a profile that keeps the
// header's rules (increasing layers, times and sizes >= 0, comm on every row
// or none) or throws an InputError naming the source. An accepted profile
// written by write_layer_profile_csv reads back equal.

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "fuzz/profile_check.h"
#include "traces/layer_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string source = "in.csv";
  ssgd::trace::LayerProfile profile;
  if (!ssgd::fuzz::accepts("parse_layer_profile_csv", {source},
                           [&] { profile = ssgd::trace::parse_layer_profile_csv(text, source); })) {
    return 0;
  }
  ssgd::fuzz::check_layer_profile("parse_layer_profile_csv", profile);
  ssgd::fuzz::check_csv_round_trip("parse_layer_profile_csv", profile);
  return 0;
}
