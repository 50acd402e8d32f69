#pragma once
// The two network models (comm_model.h): alpha-beta closed forms, or flows
// sharing links by max-min fairness. Scenario key network.model.

namespace ssgd::sim {

enum class NetworkModelKind { kAnalytical, kFlow };
const char* to_string(NetworkModelKind kind);

}  // namespace ssgd::sim
