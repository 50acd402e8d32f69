#include "fuzz/profile_check.h"

#include <set>
#include <sstream>
#include <string>

#include "fuzz/fuzz_support.h"

namespace ssgd::fuzz {
namespace {

std::string describe(const trace::LayerRow& row) {
  std::string s = "layer " + std::to_string(row.layer) + " '" + row.name + "' forward " +
                  std::to_string(row.forward.ns()) + " backward " +
                  std::to_string(row.backward.ns()) + " grad_bytes " +
                  std::to_string(row.grad_bytes);
  if (row.comm) s += " comm " + std::to_string(row.comm->ns());
  return s;
}

bool same_row(const trace::LayerRow& a, const trace::LayerRow& b) {
  return a.layer == b.layer && a.name == b.name && a.forward == b.forward &&
         a.backward == b.backward && a.grad_bytes == b.grad_bytes && a.comm == b.comm;
}

}  // namespace

void check_layer_profile(std::string_view what, const trace::LayerProfile& profile) {
  const std::string w(what);
  if (profile.layers.empty()) finding(w + ": accepted a profile without layers");
  std::set<std::string> names;
  const bool comm = profile.layers.front().comm.has_value();
  for (std::size_t i = 0; i < profile.layers.size(); ++i) {
    const trace::LayerRow& row = profile.layers[i];
    if (i > 0 && row.layer <= profile.layers[i - 1].layer) {
      finding(w + ": layer indexes do not increase at row " + std::to_string(i) + ": " +
              describe(row));
    }
    if (!names.insert(row.name).second) finding(w + ": duplicate name: " + describe(row));
    if (row.forward.ns() < 0 || row.backward.ns() < 0 || row.grad_bytes < 0 ||
        (row.comm && row.comm->ns() < 0)) {
      finding(w + ": a negative value: " + describe(row));
    }
    if (row.comm.has_value() != comm) finding(w + ": comm on some rows only: " + describe(row));
  }
  if (profile.batch_per_gpu && *profile.batch_per_gpu < 1) {
    finding(w + ": batch_per_gpu " + std::to_string(*profile.batch_per_gpu));
  }
  if (profile.update && profile.update->ns() < 0) {
    finding(w + ": update_ns " + std::to_string(profile.update->ns()));
  }
}

void check_csv_round_trip(std::string_view what, const trace::LayerProfile& profile) {
  const std::string w(what);
  std::ostringstream csv;
  must(w + ": write_layer_profile_csv", [&] { trace::write_layer_profile_csv(profile, csv); });
  trace::LayerProfile back;
  must(w + ": reading back the CSV written",
       [&] { back = trace::parse_layer_profile_csv(csv.str(), "written.csv"); });
  if (back.model != profile.model || back.batch_per_gpu != profile.batch_per_gpu ||
      back.provenance != profile.provenance || back.update != profile.update) {
    finding(w + ": the metadata read back differs; the CSV written:\n" + csv.str());
  }
  if (back.layers.size() != profile.layers.size()) {
    finding(w + ": " + std::to_string(back.layers.size()) + " layers read back instead of " +
            std::to_string(profile.layers.size()) + "; the CSV written:\n" + csv.str());
  }
  for (std::size_t i = 0; i < back.layers.size(); ++i) {
    if (!same_row(back.layers[i], profile.layers[i])) {
      finding(w + ": row " + std::to_string(i) + " read back differs: " +
              describe(profile.layers[i]) + " -> " + describe(back.layers[i]));
    }
  }
}

}  // namespace ssgd::fuzz
