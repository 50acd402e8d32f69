// Fuzz target: OSU Micro-Benchmarks latency logs (traces/import/osu/osu_log.h),
// as `ssgd calibrate` reads them; the promise is fuzz_measurements'
// (fuzz/measurement_check.h).

#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "fuzz/measurement_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::fuzz_measurements(ssgd::trace::MeasurementFormat::kOsu, "in.osu", data, size);
  return 0;
}
