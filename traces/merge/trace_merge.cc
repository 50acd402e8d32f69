#include "traces/merge/trace_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "common/error.h"
#include "common/work_context.h"
#include "traces/clock_calibration.h"
#include "traces/event_rules.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace ssgd::trace {
namespace {

namespace fs = std::filesystem;

struct RankFile {
  std::int32_t rank = 0;
  fs::path path;
  std::string name;  // file name, as in messages
  v1::CaptureMetadata metadata;
  v1::Footer footer;  // totals of a complete file; empty for a cut-short one
  std::vector<v1::Event> events;
};

// A host's clock: its name and the kind of clock its events follow.
struct HostKey {
  std::string hostname;
  int kind = 0;
  auto operator<=>(const HostKey&) const = default;
};

HostKey host_key(const RankFile& f) {
  return {f.metadata.hosts(0).hostname(), f.metadata.hosts(0).clock().kind()};
}

std::string describe(const HostKey& h) {
  return "'" + h.hostname + "' (" + v1::ClockDomain::Kind_Name(h.kind) + ")";
}

// The rank in a "rank-<r>.ssgdt" file name; nothing for any other name. A
// name of that shape whose <r> is not a rank (rank--1.ssgdt, a 20-digit
// number) is an error: skipping it would merge a job without one of its ranks.
std::optional<std::int32_t> rank_of_name(const fs::path& path) {
  const std::string name = path.filename().string();
  constexpr std::string_view kPrefix = "rank-";
  constexpr std::string_view kSuffix = ".ssgdt";
  if (name.size() < kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return std::nullopt;
  }
  const std::string_view digits(name.data() + kPrefix.size(),
                                name.size() - kPrefix.size() - kSuffix.size());
  std::int32_t r = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), r);
  const bool all_digits =
      !digits.empty() &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!all_digits || ec != std::errc{} || end != digits.data() + digits.size() || r >= kMaxRanks) {
    throw InputError({path.string(), std::nullopt, std::nullopt, "rank"},
                     fmt::format("the file name's rank '{}' is not a rank: rank files are named "
                                 "rank-<r>.ssgdt with r a decimal number in 0..2^24 - 1; rename "
                                 "or move the file",
                                 digits));
  }
  return r;
}

std::vector<RankFile> list_rank_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError({dir.string(), std::nullopt, std::nullopt, "DIR"}, "is not a folder");
  }
  std::vector<RankFile> files;
  int temporary = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("rank-") && name.find(".ssgdt.tmp.") != std::string::npos) ++temporary;
    const auto rank = rank_of_name(entry.path());
    if (!rank) continue;
    if (!entry.is_regular_file()) {
      throw InputError({entry.path().string(), std::nullopt, std::nullopt, ""},
                       "is named like a rank file but is not a regular file");
    }
    RankFile f;
    f.rank = *rank;
    f.path = entry.path();
    f.name = name;
    files.push_back(std::move(f));
  }
  if (files.empty()) {
    std::string why = "no rank-<r>.ssgdt files to merge";
    if (temporary > 0) {
      why += " (" + std::to_string(temporary) +
             " temporary rank-*.ssgdt.tmp.* files are there: the capture did not finish; "
             "rename one to rank-<r>.ssgdt to merge what it holds)";
    }
    throw InputError({dir.string(), std::nullopt, std::nullopt, ""}, why);
  }
  std::sort(files.begin(), files.end(), [](const RankFile& a, const RankFile& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.name < b.name;
  });
  for (std::size_t i = 1; i < files.size(); ++i) {
    if (files[i].rank == files[i - 1].rank) {
      throw InputError({files[i].path.string(), std::nullopt, std::nullopt, "rank"},
                       "rank " + std::to_string(files[i].rank) + " again (also in " +
                           files[i - 1].name + ")");
    }
  }
  return files;
}

void read_rank_file(RankFile& f, const MergeOptions& options, std::vector<std::string>& notes) {
  TraceReader reader = TraceReader::open(f.path);
  f.metadata = reader.metadata();
  const std::string file = f.path.string();
  if (f.metadata.rank() != f.rank) {
    throw InputError({file, std::nullopt, std::nullopt, "rank"},
                     "the header says rank " + std::to_string(f.metadata.rank()) +
                         " but the file name says rank " + std::to_string(f.rank));
  }
  if (f.metadata.hosts_size() == 0) {
    throw InputError({file, std::nullopt, std::nullopt, "hosts"},
                     "no host in the header: the clock of its events is unknown");
  }
  v1::Event event;
  while (reader.next(event)) {
    if (event.rank() != f.rank) {
      // The record is the 0-based event index in the file.
      throw InputError({file, std::nullopt, static_cast<std::int64_t>(f.events.size()), "rank"},
                       "event of rank " + std::to_string(event.rank()) + " in the file of rank " +
                           std::to_string(f.rank));
    }
    f.events.push_back(event);
  }
  if (reader.truncated()) {
    if (!options.force && !options.allow_truncated) {
      throw InputError({file, std::nullopt, std::nullopt, ""},
                       reader.truncation_warning() +
                           "; merge its readable part with --allow-truncated (or --force)");
    }
    notes.push_back(f.name + " was cut short; its first " + std::to_string(f.events.size()) +
                    " events were merged");
  } else if (reader.footer() != nullptr) {
    f.footer = *reader.footer();
  }
}

void check_world_sizes(const std::vector<RankFile>& files) {
  const RankFile& first = files.front();
  for (const RankFile& f : files) {
    if (f.metadata.world_size() != first.metadata.world_size()) {
      throw InputError({f.path.string(), std::nullopt, std::nullopt, "world_size"},
                       "world size " + std::to_string(f.metadata.world_size()) + ", but " +
                           first.name + " says " + std::to_string(first.metadata.world_size()));
    }
    if (f.metadata.world_size() > 0 && f.rank >= f.metadata.world_size()) {
      throw InputError({f.path.string(), std::nullopt, std::nullopt, "rank"},
                       "rank " + std::to_string(f.rank) + " is not below the world size " +
                           std::to_string(f.metadata.world_size()));
    }
  }
}

// Moves every time of the event by the offset at its start, so that
// durations stay exactly as measured.
void shift_event(v1::Event& e, const ClockMapping& mapping) {
  std::int64_t start = 0;
  std::int64_t end = 0;
  if (mapping.is_identity() || !event_time_span(e, start, end)) return;
  const std::int64_t d = mapping.offset_at(start);
  if (e.has_kernel()) {
    e.mutable_kernel()->set_start_ns(e.kernel().start_ns() + d);
    e.mutable_kernel()->set_end_ns(e.kernel().end_ns() + d);
  } else if (e.has_memcpy()) {
    e.mutable_memcpy()->set_start_ns(e.memcpy().start_ns() + d);
    e.mutable_memcpy()->set_end_ns(e.memcpy().end_ns() + d);
  } else if (e.has_memset()) {
    e.mutable_memset()->set_start_ns(e.memset().start_ns() + d);
    e.mutable_memset()->set_end_ns(e.memset().end_ns() + d);
  } else if (e.has_collective()) {
    e.mutable_collective()->set_start_ns(e.collective().start_ns() + d);
    e.mutable_collective()->set_end_ns(e.collective().end_ns() + d);
  } else if (e.has_marker()) {
    e.mutable_marker()->set_start_ns(e.marker().start_ns() + d);
    e.mutable_marker()->set_end_ns(e.marker().end_ns() + d);
  } else if (e.has_api_call()) {
    e.mutable_api_call()->set_start_ns(e.api_call().start_ns() + d);
    e.mutable_api_call()->set_end_ns(e.api_call().end_ns() + d);
  } else if (e.has_synchronization()) {
    e.mutable_synchronization()->set_start_ns(e.synchronization().start_ns() + d);
    e.mutable_synchronization()->set_end_ns(e.synchronization().end_ns() + d);
  } else if (e.has_cuda_event()) {
    e.mutable_cuda_event()->set_timestamp_ns(e.cuda_event().timestamp_ns() + d);
  }
}

// A per-rank file's links name hosts[0], its own host; the merged trace's
// links name `host`, that host's index in the merged list.
void remap_link_hosts(v1::Event& e, std::int32_t host, const RankFile& f, std::size_t index) {
  if (!e.has_link()) return;
  v1::Link* link = e.mutable_link();
  if (link->src_host() != 0 || link->dst_host() != 0) {
    throw InputError({f.path.string(), std::nullopt, static_cast<std::int64_t>(index), "link"},
                     "a link from host " + std::to_string(link->src_host()) + " to host " +
                         std::to_string(link->dst_host()) +
                         ": a rank file names only its own host, 0");
  }
  link->set_src_host(host);
  link->set_dst_host(host);
}

std::string join_names(const std::vector<const RankFile*>& files) {
  std::string s;
  for (const RankFile* f : files) s += (s.empty() ? "" : ", ") + f->name;
  return s;
}

// The calibration a rank file holds (the footer's, else the header's) and
// the field it is in, for messages.
const v1::ClockCalibration* calibration_of_file(const RankFile& f, std::string* field) {
  const v1::ClockCalibration* c = stored_calibration(f.metadata, &f.footer);
  if (field != nullptr) {
    *field = c == &f.footer.clock_calibration() ? "footer.clock_calibration"
                                                : "hosts[0].clock.calibration";
  }
  return c;
}

// The clock the merged events are put on: the host of the lowest rank,
// unless that host's calibration names another host as its reference (the
// clock server ran elsewhere, e.g. on a login node); then that host's,
// which is `host` when it ran ranks too.
struct ReferenceClock {
  std::string hostname;
  std::optional<HostKey> host;
};

ReferenceClock find_reference(const std::vector<HostKey>& hosts,
                              const std::map<HostKey, std::vector<const RankFile*>>& files_of) {
  ReferenceClock r;
  r.hostname = hosts.front().hostname;
  for (const RankFile* f : files_of.at(hosts.front())) {
    if (const v1::ClockCalibration* c = calibration_of_file(*f, nullptr)) {
      r.hostname = c->reference_hostname();
      break;
    }
  }
  for (const HostKey& h : hosts) {
    if (h.hostname == r.hostname) {
      r.host = h;
      break;
    }
  }
  return r;
}

// A host's calibration against `reference`: that of its lowest rank with
// one, preferring one with an end estimate (drift). Without one, the other
// reference its files name, if any.
struct CalibrationOf {
  const RankFile* file = nullptr;
  const v1::ClockCalibration* calibration = nullptr;
  std::string field;
  std::string other_reference;
};

CalibrationOf calibration_against(const std::vector<const RankFile*>& files,
                                  const std::string& reference) {
  CalibrationOf found;
  for (const RankFile* f : files) {
    std::string field;
    const v1::ClockCalibration* c = calibration_of_file(*f, &field);
    if (c == nullptr) continue;
    if (c->reference_hostname() != reference) {
      if (found.other_reference.empty()) found.other_reference = c->reference_hostname();
      continue;
    }
    if (found.file == nullptr || (c->has_end() && !found.calibration->has_end())) {
      found.file = f;
      found.calibration = c;
      found.field = field;
    }
  }
  return found;
}

}  // namespace

MergeResult merge_rank_traces(const fs::path& dir, const fs::path& output,
                              const MergeOptions& options) {
  MergeResult result;
  std::vector<RankFile> files = list_rank_files(dir);
  std::error_code ec;
  for (const RankFile& f : files) {
    if (fs::exists(output, ec) && fs::equivalent(output, f.path, ec)) {
      throw InputError({output.string(), std::nullopt, std::nullopt, "-o"},
                       "the merged trace would overwrite its input " + f.name);
    }
  }
  WorkContext context("merging", dir.string(), nullptr, "rank");
  std::uint64_t read = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    context.set_position(files[i].rank);
    read_rank_file(files[i], options, result.notes);
    read += files[i].events.size();
    if (options.progress) {
      options.progress("merge: read " + files[i].name + ": " +
                       std::to_string(files[i].events.size()) + " events (" +
                       std::to_string(i + 1) + "/" + std::to_string(files.size()) + " files, " +
                       std::to_string(read) + " events so far)");
    }
  }
  context.set_position(-1);
  const WorkContext aligning("aligning the clocks and ordering the events");
  check_world_sizes(files);
  std::int32_t world_size = files.front().metadata.world_size();
  if (world_size == 0) {  // unknown in every file (check_world_sizes): the ranks tell
    world_size = files.back().rank + 1;
    result.notes.push_back(fmt::format(
        "the rank files do not say the world size; taken as {} (the highest rank + 1)",
        world_size));
  }
  if (static_cast<std::int32_t>(files.size()) != world_size) {
    // Named up to 10, then counted: a world of 2^24 ranks stays one line.
    std::string missing;
    std::int32_t count = 0;
    std::size_t next = 0;
    for (std::int32_t r = 0; r < world_size; ++r) {
      if (next < files.size() && files[next].rank == r) {
        ++next;
      } else if (++count <= 10) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    if (count > 10) missing += fmt::format(" and {} more", count - 10);
    const std::string what = "ranks " + missing + " of world size " +
                             std::to_string(world_size) + " have no rank file";
    if (!options.force) {
      throw InputError({dir.string(), std::nullopt, std::nullopt, "world_size"},
                       what + "; merge the others with --force");
    }
    result.notes.push_back(what);
  }

  // Hosts, in the order of their lowest rank.
  std::vector<HostKey> hosts;
  std::map<HostKey, std::vector<const RankFile*>> files_of;
  for (const RankFile& f : files) {
    const HostKey key = host_key(f);
    if (!files_of.contains(key)) hosts.push_back(key);
    files_of[key].push_back(&f);
  }
  const ReferenceClock reference = find_reference(hosts, files_of);
  if (reference.host) {
    // The reference host's clock is the merged time line: list it first.
    std::stable_partition(hosts.begin(), hosts.end(),
                          [&](const HostKey& h) { return h == *reference.host; });
  }
  std::map<HostKey, ClockMapping> mapping_of;
  std::map<HostKey, const v1::ClockCalibration*> calibration_of;
  std::string uncalibrated;
  for (const HostKey& key : hosts) {
    if (reference.host && key == *reference.host) continue;
    const CalibrationOf found = calibration_against(files_of[key], reference.hostname);
    if (found.file == nullptr) {
      uncalibrated += (uncalibrated.empty() ? "" : "; ") + std::string("host ") + describe(key) +
                      " (" + join_names(files_of[key]) + ")";
      if (!found.other_reference.empty()) {
        uncalibrated += ", calibrated against '" + found.other_reference +
                        "' instead (did each node's `ssgd trace` run its own clock server? "
                        "Give them one with --clock-server HOST:PORT)";
      }
      continue;
    }
    try {
      mapping_of[key] = ClockMapping::from_proto(*found.calibration);
    } catch (const std::invalid_argument& e) {
      throw InputError({found.file->path.string(), std::nullopt, std::nullopt, found.field},
                       e.what());
    }
    calibration_of[key] = found.calibration;
  }
  const std::string reference_text =
      reference.host ? describe(*reference.host) + " (" + join_names(files_of[*reference.host]) + ")"
                     : "'" + reference.hostname + "' (the clock server's host, which ran no rank)";
  if (!uncalibrated.empty()) {
    const std::string what = std::string(hosts.size() > 1 ? "ranks are on different hosts and "
                                                           : "") +
                             "these have no clock calibration against the reference host " +
                             reference_text + ": " + uncalibrated;
    if (!options.force) {
      throw InputError({dir.string(), std::nullopt, std::nullopt, "hosts[0].clock.calibration"},
                       what + ". Their clocks cannot be aligned; merge them uncorrected "
                              "with --force");
    }
    result.notes.push_back("clocks NOT aligned: " + what);
  }

  // The events, shifted and sorted.
  struct Keyed {
    std::int64_t time;
    std::int32_t rank;
    std::size_t index;
    v1::Event* event;
  };
  std::vector<Keyed> order;
  order.reserve(read);
  for (RankFile& f : files) {
    const auto m = mapping_of.find(host_key(f));
    const ClockMapping identity;
    const ClockMapping& mapping = m == mapping_of.end() ? identity : m->second;
    const auto host = static_cast<std::int32_t>(
        std::find(hosts.begin(), hosts.end(), host_key(f)) - hosts.begin());
    for (std::size_t i = 0; i < f.events.size(); ++i) {
      v1::Event& e = f.events[i];
      shift_event(e, mapping);
      remap_link_hosts(e, host, f, i);
      std::int64_t start = 0;
      std::int64_t end = 0;
      const std::int64_t key = event_time_span(e, start, end)
                                   ? start
                                   : std::numeric_limits<std::int64_t>::min();
      order.push_back({key, f.rank, i, &e});
    }
  }
  std::sort(order.begin(), order.end(), [](const Keyed& a, const Keyed& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.index < b.index;
  });

  // The merged header: the lowest rank's, with every host.
  v1::CaptureMetadata metadata = files.front().metadata;
  metadata.set_world_size(world_size);
  metadata.clear_hosts();
  for (const HostKey& key : hosts) {
    v1::Host* host = metadata.add_hosts();
    *host = files_of[key].front()->metadata.hosts(0);
    v1::ClockDomain* clock = host->mutable_clock();
    clock->set_offset_ns(0);
    clock->set_offset_uncertainty_ns(0);
    clock->clear_calibration();
    if (const auto c = calibration_of.find(key); c != calibration_of.end()) {
      *clock->mutable_calibration() = *c->second;
      clock->set_offset_uncertainty_ns(mapping_of[key].uncertainty_ns());
    }
  }
  std::string provenance = metadata.provenance().empty() ? "captured" : metadata.provenance();
  provenance += "; merged by ssgd merge from " + std::to_string(files.size()) + " rank files";
  if ((hosts.size() > 1 || !reference.host) && uncalibrated.empty()) {
    provenance += ", clocks aligned to host '" + reference.hostname + "'" +
                  (reference.host ? "" : " (the clock server's host, which ran no rank)") +
                  " by stored calibrations";
  }
  for (const std::string& note : result.notes) provenance += "; " + note;
  metadata.set_provenance(provenance);

  if (options.progress) {
    options.progress("merge: writing " + output.string() + ": " + std::to_string(order.size()) +
                     " events");
  }
  const WorkContext writing("writing", output.string(), "merged trace");
  TraceWriter writer(output, metadata);
  for (const Keyed& k : order) writer.append(*k.event);
  for (const RankFile& f : files) {
    writer.add_dropped(f.footer.dropped_records());
    writer.add_invalid_timestamps(f.footer.invalid_timestamps());
    writer.add_nccl_plugin_counts(f.footer.nccl_events_dropped(),
                                  f.footer.nccl_incomplete_collectives(),
                                  f.footer.nccl_orphan_events());
  }
  writer.close();
  result.ranks = static_cast<int>(files.size());
  result.hosts = static_cast<int>(hosts.size());
  result.events = order.size();
  return result;
}

}  // namespace ssgd::trace
