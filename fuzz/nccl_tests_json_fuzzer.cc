// Fuzz target: nccl-tests' JSON output (traces/import/nccl_tests/nccl_tests_json.h),
// as `ssgd calibrate` reads them; the promise is fuzz_measurements'
// (fuzz/measurement_check.h).

#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "fuzz/measurement_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::fuzz_measurements(ssgd::trace::MeasurementFormat::kNcclJson, "in.json", data, size);
  return 0;
}
