#pragma once
// Which training rank this process is, read from the environment that the
// launcher set. Launchers disagree on names, so several are tried in a fixed
// order of preference, and the answer says which one it came from:
//
//   rank        RANK (torchrun, most frameworks), OMPI_COMM_WORLD_RANK (Open MPI),
//               PMI_RANK (MPICH, Intel MPI), SLURM_PROCID (srun), LOCAL_RANK
//               (last: it is only the rank within a node)
//   world size  WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS
//   local rank  LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID
//
// A value that is not a plain decimal number (digits only, no sign, fits in
// an int32), or a world size of 0, is skipped with the reason recorded, and
// the next name is tried: a tracer must not refuse to run, nor throw, over a
// launcher's odd environment. With no usable rank variable the rank is 0.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ssgd::tracer {

// Looks up one environment variable; nullopt when it is not set. Tests pass
// a map; the tracer passes process_environment().
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The real environment (getenv).
std::optional<std::string> process_environment(const char* name);

// One value that detect_rank found (or not).
struct EnvValue {
  std::optional<std::int32_t> value;
  // The variable it came from; empty when none was usable.
  std::string source;
};

struct RankEnv {
  // The rank; 0 when no rank variable was usable (rank_source is then empty).
  std::int32_t rank = 0;
  std::string rank_source;
  EnvValue world_size;
  EnvValue local_rank;
  // One line per variable that was set but skipped, e.g.
  // "RANK='abc': not a decimal number".
  std::vector<std::string> skipped;
};

// The variable names, in order of preference.
const std::vector<const char*>& rank_variables();
const std::vector<const char*>& world_size_variables();
const std::vector<const char*>& local_rank_variables();

// Reads the rank, world size and local rank. Never throws.
RankEnv detect_rank(const EnvLookup& env) noexcept;

// Parses a rank-like value: digits only (surrounding spaces allowed), no
// sign, at most INT32_MAX. On failure returns nullopt and sets `why`.
std::optional<std::int32_t> parse_rank_value(const std::string& text, std::string& why);

// A 0/1 setting `name`: "1" sets `value`, "0" clears it, empty or unset
// keeps it; anything else keeps it and adds "NAME='text' is not 0 or 1;
// <kept>" to `problems`. May throw std::bad_alloc.
void read_switch(const EnvLookup& env, const char* name, bool& value, const char* kept,
                 std::vector<std::string>& problems);

}  // namespace ssgd::tracer
