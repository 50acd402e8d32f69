#include "simulator/scaling/batch_time_model.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd::sim {
namespace {

// Rounds to the nearest nanosecond, halves away from zero, and clamps at 0.
Duration to_duration(double ns, const trace::LayerRow& row, const char* field, std::int64_t batch) {
  if (!(ns > 0)) return Duration::zero();  // also a NaN, which the inputs cannot give
  const double rounded = std::round(ns);
  // 2^62 ns is about 146 years: far beyond any layer, and safely inside int64.
  if (rounded >= 4.611686018427388e18) {
    throw std::invalid_argument(fmt::format(
        "the batch compute model gives layer '{}' a {} of {:.3g} s at batch {}, past the simulated "
        "clock's range; check scaling.global_batch",
        row.name, field, ns * 1e-9, batch));
  }
  return Duration(static_cast<std::int64_t>(rounded));
}

std::string source_of(const trace::LayerProfile& p) {
  return p.source.empty() ? std::string("the second profile") : p.source;
}

}  // namespace

BatchTimeModel fixed_fraction_model(const trace::LayerProfile& profile,
                                    std::int64_t reference_batch, double fixed_fraction) {
  if (!(fixed_fraction >= 0 && fixed_fraction < 1)) {
    throw std::invalid_argument(fmt::format(
        "scaling.fixed_fraction must be at least 0 and below 1, got {}", fixed_fraction));
  }
  if (reference_batch < 1) {
    throw std::invalid_argument(
        fmt::format("the reference batch must be at least 1, got {}", reference_batch));
  }
  BatchTimeModel m;
  m.reference_batch = reference_batch;
  const double grow = (1 - fixed_fraction) / static_cast<double>(reference_batch);
  for (const auto& row : profile.layers) {
    m.forward_ns_per_sample.push_back(grow * static_cast<double>(row.forward.ns()));
    m.backward_ns_per_sample.push_back(grow * static_cast<double>(row.backward.ns()));
  }
  m.description =
      fixed_fraction == 0
          ? fmt::format("time proportional to the batch, from batch {}", reference_batch)
          : fmt::format("t(b) = t x (f + (1 - f) b / {}), fixed fraction f = {:.6g}",
                        reference_batch, fixed_fraction);
  return m;
}

BatchTimeModel fitted_model(const trace::LayerProfile& profile, std::int64_t reference_batch,
                            const trace::LayerProfile& second, std::int64_t second_batch) {
  const std::string file = source_of(second);
  const auto fail = [&file](const std::string& field, const std::string& reason) {
    return InputError({file, std::nullopt, std::nullopt, field}, reason);
  };
  if (second_batch == reference_batch) {
    throw fail(
        "batch_per_gpu",
        fmt::format("the second profile is at batch {}, the same as the input's: a fit needs "
                    "two different batches",
                    second_batch));
  }
  if (second.layers.size() != profile.layers.size()) {
    throw fail("layer", fmt::format("has {} layers, the input {} has {}: not the same model",
                                    second.layers.size(), profile.source, profile.layers.size()));
  }
  BatchTimeModel m;
  m.reference_batch = reference_batch;
  const double db = static_cast<double>(second_batch - reference_batch);
  for (std::size_t l = 0; l < profile.layers.size(); ++l) {
    const trace::LayerRow& a = profile.layers[l];
    const trace::LayerRow& b = second.layers[l];
    if (a.name != b.name) {
      throw fail("name", fmt::format("layer {} is '{}', the input's is '{}': layers must match in "
                                     "name and order",
                                     l, b.name, a.name));
    }
    if (a.grad_bytes != b.grad_bytes) {
      throw fail(
          "grad_bytes",
          fmt::format("layer '{}' has {} gradient bytes, the input's has {}: gradient bytes do "
                      "not depend on the batch, so this is not the same model",
                      b.name, b.grad_bytes, a.grad_bytes));
    }
    const auto slope = [&](Duration ta, Duration tb, const char* field) {
      const double k = static_cast<double>(tb.ns() - ta.ns()) / db;
      if (k < 0) {
        throw fail(field,
                   fmt::format("layer '{}': {} ns at batch {} but {} ns at batch {}; the linear "
                               "model needs times that do not fall as the batch grows",
                               b.name, ta.ns(), reference_batch, tb.ns(), second_batch));
      }
      return k;
    };
    m.forward_ns_per_sample.push_back(slope(a.forward, b.forward, "forward_ns"));
    m.backward_ns_per_sample.push_back(slope(a.backward, b.backward, "backward_ns"));
  }
  m.description = fmt::format(
      "t(b) = t0 + k b per layer, fitted to batch {} ({}) and batch {} ({})", reference_batch,
      profile.source.empty() ? "the input" : profile.source, second_batch, file);
  return m;
}

trace::LayerProfile profile_at_batch(const trace::LayerProfile& profile,
                                     const BatchTimeModel& model, std::int64_t batch) {
  if (model.forward_ns_per_sample.size() != profile.layers.size() ||
      model.backward_ns_per_sample.size() != profile.layers.size()) {
    throw std::invalid_argument(fmt::format("the batch compute model has {} layers, the profile {}",
                                            model.forward_ns_per_sample.size(),
                                            profile.layers.size()));
  }
  if (batch < 1)
    throw std::invalid_argument(fmt::format("batch must be at least 1, got {}", batch));
  trace::LayerProfile out = profile;
  if (batch == model.reference_batch) return out;
  const double delta = static_cast<double>(batch - model.reference_batch);
  for (std::size_t l = 0; l < out.layers.size(); ++l) {
    trace::LayerRow& row = out.layers[l];
    row.forward =
        to_duration(static_cast<double>(row.forward.ns()) + model.forward_ns_per_sample[l] * delta,
                    row, "forward time", batch);
    row.backward = to_duration(
        static_cast<double>(row.backward.ns()) + model.backward_ns_per_sample[l] * delta, row,
        "backward time", batch);
  }
  return out;
}

Duration batch_proportional_time(Duration d, std::int64_t batch, std::int64_t reference_batch) {
  if (batch < 1 || reference_batch < 1) {
    throw std::invalid_argument(
        fmt::format("batches must be at least 1, got {} and {}", batch, reference_batch));
  }
  if (batch == reference_batch) return d;
  return scale(d, static_cast<double>(batch) / static_cast<double>(reference_batch));
}

}  // namespace ssgd::sim
