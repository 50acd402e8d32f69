#pragma once
// Named values for the TCP stream model (platform.nic.tcp_preset): how many
// connections a library stripes one transfer over, and the most one moves.
// tcp_stream_preset.cc gives each number's source; docs/platforms.md ("TCP
// streams") explains them. platform.nic.tcp_streams and tcp_stream_rate,
// when given, replace the preset's value.

#include <span>
#include <string>
#include <string_view>

namespace ssgd::sim {

struct TcpStreamPreset {
  std::string_view name;       // as written in scenarios: "nccl_socket", ...
  int streams;                 // connections one transfer is striped over
  double stream_rate_bytes_per_s;  // the most one connection moves
  std::string_view description;
  std::string_view source;
};

// All presets, in a fixed order.
std::span<const TcpStreamPreset> tcp_stream_presets();

// The preset called `name` (case-sensitive), or nullptr.
const TcpStreamPreset* find_tcp_stream_preset(std::string_view name);

// "nccl_socket, byteps" for error messages.
std::string tcp_stream_preset_names();

}  // namespace ssgd::sim
