#pragma once
// How a layer's compute time follows the per-GPU batch b: a straight line
//
//     t(b) = t0 + k b          (per layer, forward and backward apart)
//
// the linear model of Pollux (Qiao et al., "Pollux: Co-adaptive Cluster
// Scheduling for Goodput-Optimized Deep Learning", OSDI 2021, where it
// models the time of one local batch, there fitted to the whole step). t0 is
// what a layer costs whatever its batch (kernel launches, weight reads,
// small-batch under-occupancy); k b is the part that grows with the samples.
// The model is anchored at the input's own measurements: a layer measured at
// t_ref with batch b_ref keeps exactly that time at b_ref, and
//
//     t(b) = t_ref + k (b - b_ref)
//
// k comes from one of two sources:
//   - a fixed fraction f of the measured time that does not grow with the
//     batch (scaling.fixed_fraction): t0 = f t_ref, k = (1 - f) t_ref / b_ref,
//     so t(b) = t_ref (f + (1 - f) b / b_ref); f = 0 is time proportional to
//     the batch;
//   - a second measurement of the same model at another batch b2
//     (scaling.second_profile): k = (t2 - t_ref) / (b2 - b_ref), which goes
//     through both measurements.
// The result is rounded to the nearest nanosecond, halves away from zero, and
// clamped at 0 (a fit whose intercept is negative would go below 0 at small
// batches). Gradient bytes and measured comm_ns do not depend on the batch
// and are kept. I/O and host-to-device copy times are taken as proportional
// to the batch (batch_proportional_time). docs/scaling.md states the
// assumptions and the limits.

#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct BatchTimeModel {
  std::int64_t reference_batch = 1;            // b_ref: the batch of the profile's times
  std::vector<double> forward_ns_per_sample;   // k per layer, forward
  std::vector<double> backward_ns_per_sample;  // k per layer, backward
  std::string description;                     // in words, for the report
};

// t(b) = t_ref (f + (1 - f) b / b_ref) for every layer. Throws
// std::invalid_argument for f outside [0, 1) or a batch below 1.
BatchTimeModel fixed_fraction_model(const trace::LayerProfile& profile,
                                    std::int64_t reference_batch, double fixed_fraction);

// The line through each layer's times in `profile` (at reference_batch) and
// in `second` (at second_batch). Throws ssgd::InputError naming `second`'s
// source, the layer and the field when the two do not describe the same
// model: another layer count, another name at a position, other gradient
// bytes, the same batch, or a time that falls as the batch grows (k < 0).
BatchTimeModel fitted_model(const trace::LayerProfile& profile, std::int64_t reference_batch,
                            const trace::LayerProfile& second, std::int64_t second_batch);

// The profile with every layer's forward and backward time at batch `batch`
// under `model` (the profile's own times when batch == reference_batch).
// Throws std::invalid_argument when a time would not fit in int64
// nanoseconds, and when the model was made for another layer count.
trace::LayerProfile profile_at_batch(const trace::LayerProfile& profile,
                                     const BatchTimeModel& model, std::int64_t batch);

// d x batch / reference_batch, rounded to the nearest nanosecond, halves
// away from zero: the I/O and copy time of a batch of another size.
Duration batch_proportional_time(Duration d, std::int64_t batch, std::int64_t reference_batch);

}  // namespace ssgd::sim
