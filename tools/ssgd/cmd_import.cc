// ssgd import bcaffe LOG -o PROFILE.csv
// ssgd import pytorch FILE.json[.gz] -o FILE.ssgdt [--rank N] [--layers auto|marks|modules|ops]
// ssgd import kineto ... (the same import)
// ssgd import chakra DIR|FILES... -o FILE.ssgdt
#include <iostream>
#include <memory>
#include <optional>
#include <filesystem>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/logging.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/import/bcaffe/bcaffe_log.h"
#include "traces/import/chakra/chakra_import.h"
#include "traces/import/pytorch/kineto_import.h"

namespace ssgd::tools {

void add_import_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("import", "Convert another tool's output into an ssgd input");
  cmd->require_subcommand(1);
  struct Args {
    std::string log;
    OutputFile out;
  };
  auto args = std::make_shared<Args>();
  auto* bcaffe = cmd->add_subcommand(
      "bcaffe", "B-Caffe per-gradient timing log -> layer-profile CSV with measured comm_ns");
  bcaffe->add_option("LOG", args->log, "tmp*comm.log file")->required();
  add_output_option(*bcaffe, args->out, "-o,--output", "layer-profile CSV to write")->required();
  bcaffe->callback([args] {
    check_outputs({&args->out}, {args->log});
    check_input(args->log, "LOG");
    const auto profile = trace::read_bcaffe_log(args->log);
    write_output(args->out, [&] {
      AtomicFile f(args->out.path);
      trace::write_layer_profile_csv(profile, f.stream());
      f.commit();
    });
    logger("tools")->info("{}: {} layers written to {}", args->log, profile.layers.size(),
                          args->out.path);
  });

  // `pytorch` and `kineto` are one import: the writer is recognised by content.
  struct PytorchArgs {
    std::string input;
    OutputFile out;
    std::int32_t rank = -1;
    std::string layers = "auto";
  };
  auto add_pytorch = [cmd](const char* name, const char* description) {
    auto pargs = std::make_shared<PytorchArgs>();
    auto* sub = cmd->add_subcommand(name, description);
    sub->add_option("FILE", pargs->input,
                    "trace JSON written by torch.profiler (Kineto) or by the legacy profiler "
                    "(export_chrome_trace without Kineto), plain or .gz")
        ->required();
    add_output_option(*sub, pargs->out, "-o,--output", ".ssgdt trace to write")->required();
    sub->add_option("--rank", pargs->rank,
                    "rank of the file (default: its distributedInfo.rank, else its ssgd/rank mark)")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--layers", pargs->layers,
                    "where layer marks come from: auto (annotations if the file has them, else "
                    "modules, else ops), marks (forward/<l>, backward/<l> annotations and every "
                    "nn.Module range as a forward mark), modules (leaf nn.Module ranges), ops "
                    "(top-level forward operators); backward through autograd sequence numbers, "
                    "or in a legacy file by matching backward node names to forward operators")
        ->check(CLI::IsMember({"auto", "marks", "modules", "ops"}))
        ->capture_default_str();
    sub->callback([pargs] {
      trace::KinetoImportOptions options;
      if (pargs->rank >= 0) options.rank = pargs->rank;
      options.layers = *trace::parse_kineto_layer_source(pargs->layers);
      check_outputs({&pargs->out}, {pargs->input});
      check_input(pargs->input, "FILE");
      std::optional<trace::KinetoImportSummary> summary;
      write_output(pargs->out,
                   [&] { summary = trace::import_kineto(pargs->input, pargs->out.path, options); });
      trace::print_kineto_import_summary(*summary, std::cout);
    });
  };
  add_pytorch("pytorch",
              "PyTorch profiler Chrome-trace JSON, Kineto's or the legacy profiler's (recognised "
              "by content), plain or .gz -> .ssgdt trace");
  add_pytorch("kineto",
              "the same import as `pytorch` (both Kineto and legacy profiler files), kept under "
              "its first name");

  struct ChakraArgs {
    std::vector<std::string> inputs;
    OutputFile out;
  };
  auto cargs = std::make_shared<ChakraArgs>();
  auto* chakra = cmd->add_subcommand(
      "chakra",
      "Chakra execution traces, one per rank (<prefix>.<rank>.et, plain or gzip) -> .ssgdt trace "
      "of their graph, which `ssgd simulate` replays (docs/chakra.md)");
  chakra
      ->add_option("INPUT", cargs->inputs,
                   "a folder holding the job's <prefix>.<rank>.et[.gz] files, or the files")
      ->required();
  add_output_option(*chakra, cargs->out, "-o,--output", ".ssgdt trace to write")->required();
  chakra->callback([cargs] {
    check_outputs({&cargs->out}, cargs->inputs);
    std::vector<std::filesystem::path> inputs;
    for (const auto& in : cargs->inputs) {
      std::error_code ec;
      if (cargs->inputs.size() > 1 || !std::filesystem::is_directory(in, ec)) check_input(in, "INPUT");
      inputs.emplace_back(in);
    }
    std::optional<trace::ChakraImportSummary> summary;
    write_output(cargs->out, [&] { summary = trace::import_chakra(inputs, cargs->out.path); });
    trace::print_chakra_import_summary(*summary, cargs->out.path, std::cout);
  });
}

}  // namespace ssgd::tools
