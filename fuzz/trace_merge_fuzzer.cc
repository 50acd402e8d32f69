// Fuzz target: `ssgd merge` (traces/merge/trace_merge.h) on a folder of rank
// files made from the input.
//
// Input: one byte of options (bit 0: --force, bit 1: --allow-truncated), then
// the rank files rank-0.ssgdt, rank-1.ssgdt, ... one after the other, each
// ended by kNextRank (fuzz/dict/trace_merge.dict holds it); at most 8 files.
//
// Promise: merge_rank_traces writes the merged trace or throws an InputError
// naming the folder or one of its rank files, leaving no output. A merged
// trace reads back whole with as many events as the merge reports, and the
// ranks it reports.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "traces/merge/trace_merge.h"
#include "traces/trace_reader.h"

using ssgd::fuzz::finding;
using ssgd::fuzz::must;

namespace {
constexpr std::string_view kNextRank = "\nSSGD-FUZZ-NEXT-RANK\n";
constexpr std::size_t kMaxRanks = 8;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ssgd::fuzz::clear_scratch();
  ssgd::trace::MergeOptions options;
  options.force = (data[0] & 1) != 0;
  options.allow_truncated = (data[0] & 2) != 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);

  const std::string dir = ssgd::fuzz::scratch("ranks").string();
  std::vector<std::string> names;
  std::vector<std::string> files = {dir};
  while (names.size() < kMaxRanks) {
    const std::size_t end = rest.find(kNextRank);
    const std::string name = "rank-" + std::to_string(names.size()) + ".ssgdt";
    const std::string path =
        ssgd::fuzz::write_scratch("ranks/" + name, rest.substr(0, end)).string();
    names.push_back("ranks/" + name);
    files.push_back(path);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + kNextRank.size());
  }
  std::vector<std::string> inputs = names;
  inputs.push_back("ranks");

  const std::string out = ssgd::fuzz::scratch("merged.ssgdt").string();
  ssgd::trace::MergeResult result;
  bool accepted = false;
  try {
    result = ssgd::trace::merge_rank_traces(dir, out, options);
    accepted = true;
  } catch (const ssgd::InputError& error) {
    if (std::find(files.begin(), files.end(), error.where().file) == files.end()) {
      finding("merge_rank_traces: an InputError naming '" + error.where().file +
              "', neither the folder nor a rank file: " + error.what());
    }
    ssgd::fuzz::check_input_error("merge_rank_traces", {}, error);
  } catch (const std::exception& error) {
    ssgd::fuzz::unexpected_exception("merge_rank_traces", &error);
  }
  if (!accepted) {
    ssgd::fuzz::expect_scratch_files("a refused merge", inputs);
    return 0;
  }
  inputs.push_back("merged.ssgdt");
  ssgd::fuzz::expect_scratch_files("a merge", inputs);
  if (result.ranks < 1 || result.ranks > static_cast<int>(names.size()) || result.hosts < 1 ||
      result.hosts > result.ranks) {
    finding("merge_rank_traces: " + std::to_string(result.ranks) + " ranks on " +
            std::to_string(result.hosts) + " hosts from " + std::to_string(names.size()) +
            " rank files");
  }
  must("reading back the merged trace", [&] {
    ssgd::trace::TraceReader reader = ssgd::trace::TraceReader::open(out);
    ssgd::trace::v1::Event event;
    std::uint64_t events = 0;
    while (reader.next(event)) ++events;
    if (reader.truncated()) finding("the merged trace reads as cut short");
    if (events != result.events) {
      finding("the merged trace holds " + std::to_string(events) + " events, the merge said " +
              std::to_string(result.events));
    }
  });
  return 0;
}
