#pragma once
// What every importer's fuzzer checks of an input the importer accepted:
// only the input and the output are left in the scratch folder, the output
// holds events, reads back whole with as many events as the import said,
// and its collectives and replay input pass their checks.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace ssgd::fuzz {

// `what`: the input's kind, for findings ("an imported export");
// `input_name`: the input's scratch file name.
void check_imported_trace(std::string_view what, const std::string& input_name,
                          const std::filesystem::path& out, std::uint64_t events_written);

}  // namespace ssgd::fuzz
