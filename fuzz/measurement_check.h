#pragma once
// The fuzz step shared by the readers of `ssgd calibrate`'s measurement files
// (traces/measurement.h): OSU logs, nccl-tests text and JSON.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "traces/import/measurement_files.h"

namespace ssgd::fuzz {

// Writes the input to scratch(name) and reads it with read_measurements,
// once in `format` with no options, once in `format` with --ranks 4 --op
// all_reduce --in-place, and once recognised by content (auto). Promise:
// each returns a non-empty list whose measurements have ranks >= 2, bytes
// > 0 and finite, time > 0, and the file as source, or throws an InputError
// naming the file.
void fuzz_measurements(trace::MeasurementFormat format, std::string_view name,
                       const std::uint8_t* data, std::size_t size);

}  // namespace ssgd::fuzz
