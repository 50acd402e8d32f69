#pragma once
// One collective at a range of sizes on a scenario's platform, as
// nccl-tests reports it (`ssgd collectives`): for each size, the algorithm,
// protocol and channels the job's library runs it with, its time alone under
// the scenario's network model, and the algorithm and bus bandwidth. The
// same CommModel a replay uses gives every figure, so what this prints is
// what a replay's collectives take.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/time.h"
#include "simulator/collective/collective.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

// The sweep as `ssgd collectives` takes it; errors name these flags.
struct CollectivesRequest {
  std::string op = "all_reduce";  // --op
  std::string from = "8B";        // --from: the smallest size (nccl-tests' -b)
  std::string to = "8GiB";        // --to: the largest (-e)
  std::string factor = "2";       // --factor: each size times this (-f), above 1
};

struct CollectivesFlags {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::vector<std::int64_t> sizes;
};

// Throws InputError naming the flag: an unknown operation, a size that is
// not a positive byte count, --to below --from, a factor not above 1 or more
// than 1000 sizes.
CollectivesFlags check_collectives_request(const CollectivesRequest& request);

struct CollectiveRow {
  std::int64_t bytes = 0;
  std::string algorithm;
  std::string protocol;   // NCCL's; empty when NCCL does not run it
  int channels = 0;       // NCCL's; 0 when NCCL does not run it
  Duration time;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
};

struct CollectivesResult {
  std::string op;
  std::string network;  // the comm model's one-line description
  std::string model;    // network.model
  std::int64_t ranks = 0;
  std::int64_t nodes = 0;
  std::int64_t gpus_per_node = 0;
  std::vector<CollectiveRow> rows;
};

// Every size on the scenario's job (its platform, library and network
// model), each alone. Throws InputError (located at the scenario key) for a
// platform or settings that cannot run it, or a job of one GPU.
CollectivesResult run_collectives(const Scenario& scenario, const CollectivesFlags& flags);

// nccl-tests' layout: a header, then size, count of elements (4-byte
// floats), algorithm, protocol, channels, time in us, algbw and busbw in GB/s.
std::string collectives_table(const CollectivesResult& result);
nlohmann::json collectives_json(const CollectivesResult& result);

}  // namespace ssgd::sim
