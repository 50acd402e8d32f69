#pragma once
// Which files hold which rank of a Chakra ET job, by their names
// (traces/chakra/et_file.h, parse_file_name). Given a folder, every such file
// in it belongs to the job, and they must share one prefix; given files,
// each must be named so, unless there is one file, which is rank 0. The
// ranks must be 0..N-1, each once. Errors are InputErrors naming the file
// or folder and what is wrong (a missing rank, two prefixes, a duplicate).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ssgd::trace {

struct ChakraRankFile {
  std::int32_t rank = 0;
  std::filesystem::path path;
};

// Sorted by rank.
std::vector<ChakraRankFile> find_chakra_rank_files(
    const std::vector<std::filesystem::path>& inputs);

}  // namespace ssgd::trace
