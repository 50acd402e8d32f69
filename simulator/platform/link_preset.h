#pragma once
// Named link presets for the alpha-beta (Hockney) model: a per-message
// latency alpha and a sustained bandwidth 1/beta. link_preset.cc documents
// every number and where it comes from; docs/links.md tabulates them.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/time.h"

namespace ssgd::sim {

enum class LinkClass { kPcie, kNvlink, kEthernet, kInfiniband };

struct LinkPreset {
  std::string_view name;          // as written in scenarios: "pcie3_x16", "10gbe", ...
  LinkClass link_class;
  Duration latency;               // alpha: one message's start-up cost
  double bandwidth_bytes_per_s;   // 1/beta: sustained payload bandwidth, one direction
  std::string_view description;   // one line for `ssgd presets` and the docs
  std::string_view source;        // where latency and bandwidth come from
};

// All presets, in a fixed order.
std::span<const LinkPreset> link_presets();

// The preset called `name` (case-sensitive), or nullptr.
const LinkPreset* find_link_preset(std::string_view name);

// "pcie3_x16, pcie4_x16, ..." for error messages.
std::string link_preset_names();
// "unknown link preset 'X' (did you mean 'Y'?); known presets: ..."
std::string unknown_link_preset(std::string_view name);

const char* to_string(LinkClass c);

// The payload share of a line the presets of a class take as their
// sustained bandwidth (link_preset.cc): InfiniBand 0.95, Ethernet 0.9, 1 for
// the rest. A link's line rate is its bandwidth over this.
double payload_share(LinkClass c);
// The same for the preset called `name`; 1 for a name that is none.
double payload_share(std::string_view name);

// A preset with a scenario's overrides applied.
struct LinkParams {
  std::string name;                   // preset name, with "(overridden)" when changed
  Duration latency;                   // alpha
  double bandwidth_bytes_per_s = 0;   // 1/beta
};

// A link as a user chooses it: a preset name plus optional overrides of its
// numbers (scenario keys network.intra_node*, network.inter_node*).
struct LinkChoice {
  std::string preset;                           // must name a link preset
  std::optional<double> bandwidth_bytes_per_s;  // overrides the preset's, > 0
  std::optional<Duration> latency;              // overrides the preset's, >= 0
};

// The preset with the choice's overrides applied. Throws std::invalid_argument
// for an unknown preset or a non-positive bandwidth.
LinkParams resolve_link(const LinkChoice& choice);

}  // namespace ssgd::sim
