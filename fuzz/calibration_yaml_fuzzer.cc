// Fuzz target: network calibration files
// (simulator/calibration/network_calibration.h), as a scenario's
// network.calibration names them.
//
// Promise: read_network_calibration returns a calibration or throws an
// InputError naming the file. An accepted calibration, written by
// write_network_calibration, reads back, and writing that again gives the
// same bytes (the writer rounds errors and rates, so the first write is
// where the text settles).

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "simulator/calibration/network_calibration.h"

using ssgd::fuzz::finding;
using ssgd::fuzz::must;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  const std::string in = ssgd::fuzz::write_scratch("in.yaml", data, size).string();
  ssgd::sim::NetworkCalibration calibration;
  if (!ssgd::fuzz::accepts("read_network_calibration", {in},
                           [&] { calibration = ssgd::sim::read_network_calibration(in); })) {
    return 0;
  }
  if (calibration.collectives.empty()) finding("accepted a calibration without collectives");
  for (const auto& c : calibration.collectives) {
    if (c.bands.empty()) finding("accepted a collective without bands");
    for (const auto& band : c.bands) {
      if (!(band.bandwidth_bytes_per_s > 0) || band.latency.ns() < 0) {
        finding("accepted a band with bandwidth " + std::to_string(band.bandwidth_bytes_per_s) +
                " B/s and latency " + std::to_string(band.latency.ns()) + " ns");
      }
    }
  }
  const std::string first = ssgd::fuzz::scratch("first.yaml").string();
  const std::string second = ssgd::fuzz::scratch("second.yaml").string();
  must("writing an accepted calibration",
       [&] { ssgd::sim::write_network_calibration(calibration, first); });
  ssgd::sim::NetworkCalibration back;
  must("reading back the calibration written",
       [&] { back = ssgd::sim::read_network_calibration(first); });
  must("writing the calibration read back",
       [&] { ssgd::sim::write_network_calibration(back, second); });
  const std::string a = ssgd::fuzz::read_bytes(first);
  const std::string b = ssgd::fuzz::read_bytes(second);
  if (a != b)
    finding("the calibration written, read back and written again differs:\n" + a + "\nagain:\n" +
            b);
  return 0;
}
