#pragma once
// ssgd calibrate --interference TRACE...: the interference factors fitted on
// captures (simulator/calibration/interference_fit.h), printed with their
// spread and written as scenario keys (-o).

#include <string>
#include <vector>

#include "tools/ssgd/cli_options.h"

namespace ssgd::tools {

// `calibration`: a network calibration timing the collectives alone; empty: none.
void run_interference_fit(const std::vector<std::string>& inputs, const OutputFile& output,
                          bool allow_truncated, const std::string& calibration);

}  // namespace ssgd::tools
