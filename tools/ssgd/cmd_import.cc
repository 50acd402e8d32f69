// ssgd import bcaffe LOG -o PROFILE.csv
// ssgd import kineto FILE.json[.gz] -o FILE.ssgdt [--rank N] [--layers auto|marks|modules|ops]
#include <iostream>
#include <memory>
#include <string>

#include "common/atomic_file.h"
#include "common/logging.h"
#include "traces/bcaffe_log.h"
#include "traces/kineto_import.h"
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

  struct KinetoArgs {
    std::string input;
    std::string out;
    std::int32_t rank = -1;
    std::string layers = "auto";
  };
  auto kargs = std::make_shared<KinetoArgs>();
  auto* kineto = cmd->add_subcommand(
      "kineto", "PyTorch profiler (Kineto) Chrome-trace JSON, plain or .gz -> .ssgdt trace");
  kineto->add_option("FILE", kargs->input, "trace JSON written by torch.profiler")->required();
  kineto->add_option("-o,--output", kargs->out, ".ssgdt trace to write")->required();
  kineto->add_option("--rank", kargs->rank, "rank of the file (default: its distributedInfo.rank)")
      ->check(CLI::NonNegativeNumber);
  kineto
      ->add_option("--layers", kargs->layers,
                   "where layer marks come from: auto (annotations if the file has them, else "
                   "modules, else ops), marks (forward/<l>, backward/<l> annotations and every "
                   "nn.Module range as a forward mark), modules (leaf nn.Module ranges), ops "
                   "(top-level forward operators); backward through autograd sequence numbers")
      ->check(CLI::IsMember({"auto", "marks", "modules", "ops"}))
      ->capture_default_str();
  kineto->callback([kargs] {
    trace::KinetoImportOptions options;
    if (kargs->rank >= 0) options.rank = kargs->rank;
    options.layers = *trace::parse_kineto_layer_source(kargs->layers);
    const auto summary = trace::import_kineto(kargs->input, kargs->out, options);
    trace::print_kineto_import_summary(summary, std::cout);
  });
}

}  // namespace ssgd::tools
