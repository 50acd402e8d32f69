// ssgd import bcaffe LOG -o PROFILE.csv
#include <iostream>
#include <memory>
#include <string>

#include "common/atomic_file.h"
#include "common/logging.h"
#include "traces/bcaffe_log.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {

void add_import_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("import", "Convert another tool's output into an ssgd input");
  cmd->require_subcommand(1);
  struct Args {
    std::string log;
    std::string out;
  };
  auto args = std::make_shared<Args>();
  auto* bcaffe = cmd->add_subcommand(
      "bcaffe", "B-Caffe per-gradient timing log -> layer-profile CSV with measured comm_ns");
  bcaffe->add_option("LOG", args->log, "tmp*comm.log file")->required();
  bcaffe->add_option("-o,--output", args->out, "layer-profile CSV to write")->required();
  bcaffe->callback([args] {
    const auto profile = trace::read_bcaffe_log(args->log);
    AtomicFile f(args->out);
    trace::write_layer_profile_csv(profile, f.stream());
    f.commit();
    logger("tools")->info("{}: {} layers written to {}", args->log, profile.layers.size(), args->out);
  });
}

}  // namespace ssgd::tools
