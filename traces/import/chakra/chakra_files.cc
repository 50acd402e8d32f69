#include "traces/import/chakra/chakra_files.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/error.h"
#include "traces/chakra/et_file.h"
#include "traces/event_rules.h"

namespace ssgd::trace {
namespace {

[[noreturn]] void fail(const std::filesystem::path& where, const std::string& what) {
  throw InputError({where.string(), std::nullopt, std::nullopt, ""}, what);
}

}  // namespace

std::vector<ChakraRankFile> find_chakra_rank_files(
    const std::vector<std::filesystem::path>& inputs) {
  if (inputs.empty()) fail("", "no Chakra ET files given");
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  const bool folder = inputs.size() == 1 && std::filesystem::is_directory(inputs[0], ec);
  if (folder) {
    for (const auto& entry : std::filesystem::directory_iterator(inputs[0], ec)) {
      std::string prefix;
      std::int64_t rank = 0;
      if (entry.is_regular_file(ec) &&
          chakra::parse_file_name(entry.path().filename().string(), prefix, rank)) {
        files.push_back(entry.path());
      }
    }
    if (ec) fail(inputs[0], fmt::format("cannot be listed: {}", ec.message()));
    std::sort(files.begin(),
              files.end());  // messages name the same file whatever the listing order
    if (files.empty()) {
      fail(inputs[0],
           "holds no Chakra ET file (named <prefix>.<rank>.et or <prefix>.<rank>.et.gz)");
    }
  } else {
    files = inputs;
  }
  std::vector<ChakraRankFile> out;
  if (!folder && files.size() == 1) {
    std::string prefix;
    std::int64_t rank = 0;
    if (!chakra::parse_file_name(files[0].filename().string(), prefix, rank) || rank == 0) {
      return {{0, files[0]}};
    }
  }
  std::string first_prefix;
  std::filesystem::path first_file;
  std::map<std::int64_t, std::filesystem::path> by_rank;
  for (const auto& f : files) {
    std::string prefix;
    std::int64_t rank = 0;
    if (!chakra::parse_file_name(f.filename().string(), prefix, rank)) {
      fail(f,
           "is not named <prefix>.<rank>.et[.gz], so its rank is unknown; with several files, "
           "each must be named so");
    }
    if (rank >= kMaxRanks) fail(f, fmt::format("rank {} is out of range (below 2^24)", rank));
    if (first_file.empty()) {
      first_prefix = prefix;
      first_file = f;
    } else if (prefix != first_prefix) {
      fail(f, fmt::format("its prefix '{}' differs from '{}' of {}; one job's files share one "
                          "prefix",
                          prefix, first_prefix, first_file.string()));
    }
    if (auto [it, fresh] = by_rank.emplace(rank, f); !fresh) {
      fail(f, fmt::format("is rank {}, as is {}", rank, it->second.string()));
    }
  }
  std::vector<std::int64_t> missing;
  const std::int64_t world = by_rank.rbegin()->first + 1;
  for (std::int64_t r = 0; r < world && missing.size() < 10; ++r) {
    if (!by_rank.contains(r)) missing.push_back(r);
  }
  if (!missing.empty()) {
    fail(folder ? inputs[0] : files[0],
         fmt::format(
             "the ranks go up to {} but rank{} {}{} missing: a job's ranks are 0..N-1", world - 1,
             missing.size() > 1 ? "s" : "", fmt::join(missing, ", "),
             missing.size() >= 10 ? " and more are" : (missing.size() > 1 ? " are" : " is")));
  }
  for (auto& [rank, path] : by_rank) out.push_back({static_cast<std::int32_t>(rank), path});
  return out;
}

}  // namespace ssgd::trace
