#pragma once
// Checks of a layer profile a reader accepted (traces/layer_profile.h), shared
// by the layer-CSV and B-Caffe targets.

#include <string_view>

#include "traces/layer_profile.h"

namespace ssgd::fuzz {

// A finding unless `profile` keeps the rules traces/layer_profile.h states:
// at least one layer, strictly increasing layer indexes, unique names,
// times and gradient bytes >= 0, comm on every row or none, batch >= 1 and
// update >= 0 when given.
void check_layer_profile(std::string_view what, const trace::LayerProfile& profile);

// A finding unless `profile`, written by write_layer_profile_csv, reads back
// (parse_layer_profile_csv) to an equal profile.
void check_csv_round_trip(std::string_view what, const trace::LayerProfile& profile);

}  // namespace ssgd::fuzz
