#pragma once
// Reader for the per-gradient timing logs of the MG-WFBP authors' B-Caffe
// (GoogLeNet S-SGD on a 10GbE cluster). Each line ends in a bracketed list
//   [param_id, size, compute_time, communication_time(, merged_time)]
// with size in fp32 elements and times in microseconds. Read as the data's
// README says:
//   - consecutive param_ids with an equal compute_time form one layer whose
//     backward time is that value, counted once;
//   - a layer's gradient bytes are 4 x the sum of its tensors' sizes;
//   - a layer's comm time is the sum of its tensors' communication_time;
//   - a file holding several dumps (a new dump starts at param_id 0) is read
//     from its last complete dump; a dump whose times are all zero is skipped;
//   - each layer's forward time is half its backward time, so the total
//     forward time is half the total backward time (the authors' own rule).
// The result is a LayerProfile with comm set on every row, batch_per_gpu 64
// and provenance naming the file.

#include <filesystem>
#include <string>
#include <string_view>

#include "traces/layer_profile.h"

namespace ssgd::trace {

// Throws ssgd::InputError naming the file, line and field on a malformed
// bracketed list, a negative size or time, ids that do not start at 0 or do
// not increase by one, or no complete non-zero dump.
LayerProfile parse_bcaffe_log(std::string_view text, const std::string& source);
LayerProfile read_bcaffe_log(const std::filesystem::path& path);

// True when `head` (a file's first bytes) looks like a B-Caffe log: its first
// non-blank line ends in a bracketed list of four or five numbers.
bool looks_like_bcaffe_log(std::string_view head);

}  // namespace ssgd::trace
