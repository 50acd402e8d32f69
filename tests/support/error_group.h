#pragma once
// A group of validation cases' signed errors (percent): the median of their
// absolute values, their mean, and the worst case by name. Shared by the
// validation tests that replay a dataset (simulator/dataset/dataset_replay.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ssgd::testing {

struct ErrorGroup {
  std::vector<double> errors;  // signed, percent
  std::string worst;
  double worst_abs = -1;

  void add(const std::string& name, double error_percent) {
    errors.push_back(error_percent);
    if (std::abs(error_percent) > worst_abs) {
      worst_abs = std::abs(error_percent);
      worst = name;
    }
  }
  [[nodiscard]] double median_abs() const {
    std::vector<double> a;
    for (double e : errors) a.push_back(std::abs(e));
    std::sort(a.begin(), a.end());
    const std::size_t n = a.size();
    if (n == 0) return 0;
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
  }
  [[nodiscard]] double mean_signed() const {
    double s = 0;
    for (double e : errors) s += e;
    return errors.empty() ? 0 : s / static_cast<double>(errors.size());
  }
};

}  // namespace ssgd::testing
