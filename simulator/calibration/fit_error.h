#pragma once
// What the fits (band_fit.h, stream_fit.h, and the NIC fit of
// simulator/api/nic_fit.h) say of their errors.

#include <vector>

namespace ssgd::sim {

// The median of `values`: the middle one, or the mean of the middle two for
// an even count; 0 for none.
double median(std::vector<double> values);

}  // namespace ssgd::sim
