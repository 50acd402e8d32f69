#include "tracer/core/rank_env.h"

#include <cstdlib>
#include <limits>

namespace ssgd::tracer {

namespace {

// The first usable variable of `names`; a variable that is set but unusable
// (or, with `positive`, zero) is noted in `skipped`.
EnvValue first_usable(const EnvLookup& env, const std::vector<const char*>& names, bool positive,
                      std::vector<std::string>& skipped) {
  for (const char* name : names) {
    const std::optional<std::string> text = env(name);
    if (!text) continue;
    std::string why;
    std::optional<std::int32_t> v = parse_rank_value(*text, why);
    if (v && positive && *v == 0) {
      v.reset();
      why = "a size must be at least 1";
    }
    if (!v) {
      skipped.push_back(std::string(name) + "='" + *text + "': " + why);
      continue;
    }
    return EnvValue{v, name};
  }
  return EnvValue{};
}

}  // namespace

std::optional<std::string> process_environment(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

const std::vector<const char*>& rank_variables() {
  static const std::vector<const char*> names = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                                 "SLURM_PROCID", "LOCAL_RANK"};
  return names;
}

const std::vector<const char*>& world_size_variables() {
  static const std::vector<const char*> names = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                                 "SLURM_NTASKS"};
  return names;
}

const std::vector<const char*>& local_rank_variables() {
  static const std::vector<const char*> names = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                                 "MPI_LOCALRANKID", "SLURM_LOCALID"};
  return names;
}

std::optional<std::int32_t> parse_rank_value(const std::string& text, std::string& why) {
  std::size_t begin = text.find_first_not_of(" \t");
  std::size_t end = text.find_last_not_of(" \t");
  if (begin == std::string::npos) {
    why = "empty";
    return std::nullopt;
  }
  if (text[begin] == '-') {
    why = "negative";
    return std::nullopt;
  }
  std::int64_t v = 0;
  for (std::size_t i = begin; i <= end; ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') {
      why = "not a decimal number";
      return std::nullopt;
    }
    v = v * 10 + (c - '0');
    if (v > std::numeric_limits<std::int32_t>::max()) {
      why = "out of range (more than 2147483647)";
      return std::nullopt;
    }
  }
  return static_cast<std::int32_t>(v);
}

RankEnv detect_rank(const EnvLookup& env) noexcept {
  RankEnv r;
  try {
    const EnvValue rank = first_usable(env, rank_variables(), false, r.skipped);
    if (rank.value) {
      r.rank = *rank.value;
      r.rank_source = rank.source;
    }
    r.world_size = first_usable(env, world_size_variables(), true, r.skipped);
    r.local_rank = first_usable(env, local_rank_variables(), false, r.skipped);
  } catch (...) {
    // Only allocation can fail here; whatever was found so far stands.
    r.skipped.clear();
  }
  return r;
}

void read_switch(const EnvLookup& env, const char* name, bool& value, const char* kept,
                 std::vector<std::string>& problems) {
  const auto v = env(name);
  if (!v || v->empty()) return;
  if (*v == "1" || *v == "0") {
    value = *v == "1";
  } else {
    problems.push_back(std::string(name) + "='" + *v + "' is not 0 or 1; " + kept);
  }
}

}  // namespace ssgd::tracer
