// Fuzz target: B-Caffe per-gradient logs (traces/import/bcaffe/bcaffe_log.h).
//
// Promise: parse_bcaffe_log returns a layer profile that keeps the layer
// profile's rules, with comm on every row, or throws an InputError naming
// the source. What it returns, written as a layer-profile CSV, reads back
// equal (`ssgd import bcaffe` writes it so).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "fuzz/profile_check.h"
#include "traces/import/bcaffe/bcaffe_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string source = "in.log";
  ssgd::trace::LayerProfile profile;
  if (!ssgd::fuzz::accepts("parse_bcaffe_log", {source},
                           [&] { profile = ssgd::trace::parse_bcaffe_log(text, source); })) {
    return 0;
  }
  ssgd::fuzz::check_layer_profile("parse_bcaffe_log", profile);
  if (!profile.has_comm()) ssgd::fuzz::finding("parse_bcaffe_log: a profile without comm times");
  ssgd::fuzz::check_csv_round_trip("parse_bcaffe_log", profile);
  return 0;
}
