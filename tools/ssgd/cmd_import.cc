// ssgd import bcaffe LOG -o PROFILE.csv
// ssgd import pytorch FILE.json[.gz] -o FILE.ssgdt [--rank N] [--layers auto|marks|modules|ops]
// ssgd import pytorch DIR -o FILE.ssgdt [--force] (every rank's file, merged)
// ssgd import kineto ... (the same import)
// ssgd import chakra DIR|FILES... -o FILE.ssgdt
// ssgd import nsys FILE.sqlite|DIR -o FILE.ssgdt [--rank N] [--force]
#include <iostream>
#include <memory>
#include <optional>
#include <filesystem>
#include <string>
#include <vector>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <unistd.h>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/logging.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/import/bcaffe/bcaffe_log.h"
#include "traces/import/chakra/chakra_import.h"
#include "traces/import/pytorch/pytorch_import.h"
#ifdef SSGD_WITH_NSYS_IMPORT
#include "traces/import/nsys/nsys_import.h"
#endif
#include "traces/merge/trace_merge.h"

namespace ssgd::tools {
namespace {

namespace fs = std::filesystem;

// A folder the rank files are imported into, removed on every way out.
struct ScratchFolder {
  fs::path path;
  explicit ScratchFolder(const fs::path& near) {
    const fs::path parent = fs::absolute(near).parent_path();
    for (int i = 0;; ++i) {
      path = parent / fmt::format(".ssgd-import.{}.{}", ::getpid(), i);
      std::error_code ec;
      if (fs::create_directory(path, ec)) return;
      if (ec || i > 1000) {
        throw std::runtime_error(fmt::format("cannot make a scratch folder in '{}': {}",
                                             parent.string(), ec ? ec.message() : "too many"));
      }
    }
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
};

// The rank files of a folder: those ending in one of `suffixes`, not
// hidden, sorted.
std::vector<fs::path> rank_files(const std::string& dir, std::initializer_list<const char*> suffixes) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(".") || !entry.is_regular_file()) continue;
    for (const char* suffix : suffixes) {
      if (name.ends_with(suffix)) {
        files.push_back(entry.path());
        break;
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The rank a file's name gives (the last number in it: rank0.json.gz,
// worker_3.pt.trace.json), if any.
std::optional<std::int32_t> rank_in_name(const std::string& name) {
  std::optional<std::int32_t> rank;
  for (std::size_t i = 0; i < name.size();) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
    if (j - i <= 6) rank = static_cast<std::int32_t>(std::stoi(name.substr(i, j - i)));
    i = j;
  }
  return rank;
}

// What importing one rank's file into the scratch folder gave.
struct RankImport {
  std::int32_t rank = 0;
  std::string rank_source;
  std::uint64_t events = 0;
};
// Imports `file` into `tmp`; `name_rank` is the rank its name gives, used
// when the file says none (and required then).
using ImportRank = std::function<RankImport(const fs::path& file, const fs::path& tmp,
                                            std::optional<std::int32_t> name_rank)>;

// ssgd import <tool> DIR: every rank's file imported, then merged as
// `ssgd merge` merges (one time line, clocks aligned where the files say).
// `files` are the folder's files of that tool, `kind` says what they are.
void import_rank_folder(const std::string& dir, const std::vector<fs::path>& files,
                        const char* kind, const OutputFile& out, bool force,
                        const ImportRank& import_one) {
  if (files.empty()) {
    throw InputError({dir, std::nullopt, std::nullopt, "FILE"},
                     fmt::format("a folder without {}", kind));
  }
  std::vector<std::string> inputs;
  for (const auto& f : files) inputs.push_back(f.string());
  check_outputs({&out}, inputs);
  check_inputs(inputs, "FILE");
  ScratchFolder scratch(out.path);
  std::map<std::int32_t, std::string> by_rank;
  for (const auto& f : files) {
    // When the file does not say its rank, its name must (read once).
    const fs::path tmp = scratch.path / "import.ssgdt";
    const RankImport s = import_one(f, tmp, rank_in_name(f.filename().string()));
    if (const auto [it, fresh] = by_rank.emplace(s.rank, f.string()); !fresh) {
      throw InputError({f.string(), std::nullopt, std::nullopt, "rank"},
                       fmt::format("rank {} again: '{}' is rank {} too", s.rank, it->second, s.rank));
    }
    fs::rename(tmp, scratch.path / fmt::format("rank-{}.ssgdt", s.rank));
    std::cout << fmt::format("{}: rank {} ({}), {} event(s)\n", f.string(), s.rank, s.rank_source,
                             s.events);
  }
  trace::MergeOptions merge;
  merge.force = force;
  trace::MergeResult merged;
  try {
    write_output(out, [&] { merged = trace::merge_rank_traces(scratch.path, out.path, merge); });
  } catch (const InputError& e) {
    // The merge names its scratch files (rank-N.ssgdt): name the inputs.
    const auto input_of = [&](std::string text) {
      for (const auto& [rank, file] : by_rank) {
        const std::string scratch_name = fmt::format("rank-{}.ssgdt", rank);
        const std::string full = (scratch.path / scratch_name).string();
        for (const std::string& from : {full, scratch_name}) {
          for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + file.size())) {
            text.replace(at, from.size(), file);
          }
        }
      }
      return text;
    };
    InputLocation where = e.where();
    where.file = input_of(where.file);
    throw InputError(where, input_of(e.reason()));
  }
  std::cout << fmt::format("merged {} rank(s) from {} host(s), {} events -> {}\n", merged.ranks,
                           merged.hosts, merged.events, out.path);
  for (const auto& note : merged.notes) std::cout << "  note: " << note << "\n";
}

void import_pytorch_folder(const std::string& dir, const OutputFile& out,
                           const trace::PytorchImportOptions& base, bool force) {
  import_rank_folder(
      dir, rank_files(dir, {".json", ".json.gz"}), "PyTorch profiler files (*.json, *.json.gz)",
      out, force,
      [&](const fs::path& f, const fs::path& tmp, std::optional<std::int32_t> name_rank) {
        trace::PytorchImportOptions options = base;
        options.name_rank = name_rank;
        options.require_rank = true;
        const auto s = trace::import_pytorch(f.string(), tmp.string(), options);
        return RankImport{s.rank, s.rank_source, s.events_written};
      });
}

}  // namespace

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
    bool force = false;
  };
  auto add_pytorch = [cmd](const char* name, const char* description) {
    auto pargs = std::make_shared<PytorchArgs>();
    auto* sub = cmd->add_subcommand(name, description);
    sub->add_option("FILE", pargs->input,
                    "trace JSON written by torch.profiler (Kineto) or by the legacy profiler "
                    "(export_chrome_trace without Kineto), plain or .gz; or a folder of one such "
                    "file per rank, each imported and all merged into one trace (as ssgd merge)")
        ->required();
    sub->add_flag("--force", pargs->force,
                  "FILE a folder: merge even ranks on hosts whose clocks cannot be aligned "
                  "(uncorrected), as ssgd merge --force; the trace says so");
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
      trace::PytorchImportOptions options;
      if (pargs->rank >= 0) options.rank = pargs->rank;
      options.layers = *trace::parse_kineto_layer_source(pargs->layers);
      if (std::filesystem::is_directory(pargs->input)) {
        if (pargs->rank >= 0) {
          throw flag_error("--rank", std::to_string(pargs->rank),
                           "one rank for a folder of ranks: each file's rank comes from the file "
                           "(distributedInfo, ssgd/rank) or its name");
        }
        import_pytorch_folder(pargs->input, pargs->out, options, pargs->force);
        return;
      }
      if (pargs->force) {
        throw flag_error("--force", "merges a folder of rank files: FILE is one file");
      }
      check_outputs({&pargs->out}, {pargs->input});
      check_input(pargs->input, "FILE");
      std::optional<trace::PytorchImportSummary> summary;
      write_output(pargs->out, [&] {
        summary = trace::import_pytorch(pargs->input, pargs->out.path, options);
      });
      trace::print_pytorch_import_summary(*summary, std::cout);
    });
  };
  add_pytorch("pytorch",
              "PyTorch profiler Chrome-trace JSON, Kineto's or the legacy profiler's (recognised "
              "by content), plain or .gz -> .ssgdt trace");
  add_pytorch("kineto",
              "the same import as `pytorch` (both Kineto and legacy profiler files), kept under "
              "its first name");

  // `nsys`: an Nsight Systems report's SQLite export (docs/nsys.md).
  struct NsysArgs {
    std::string input;
    OutputFile out;
    std::int32_t rank = -1;
    bool force = false;
  };
  auto nargs = std::make_shared<NsysArgs>();
  auto* nsys = cmd->add_subcommand(
      "nsys",
      "NVIDIA Nsight Systems report exported to SQLite (nsys export --type sqlite) -> .ssgdt "
      "trace of one rank; or a folder of one export per rank, merged (docs/nsys.md)");
  nsys->add_option("FILE", nargs->input,
                   "the .sqlite file of `nsys export --type sqlite`, or a folder of one such "
                   "file per rank (*.sqlite), each imported and all merged as ssgd merge does")
      ->required();
  add_output_option(*nsys, nargs->out, "-o,--output", ".ssgdt trace to write")->required();
  nsys->add_option("--rank", nargs->rank, "rank of the file (default: its ssgd/rank NVTX mark)")
      ->check(CLI::NonNegativeNumber);
  nsys->add_flag("--force", nargs->force,
                 "FILE a folder: merge even ranks on hosts whose clocks cannot be aligned "
                 "(uncorrected), as ssgd merge --force");
  nsys->callback([nargs] {
#ifdef SSGD_WITH_NSYS_IMPORT
    trace::NsysImportOptions options;
    if (nargs->rank >= 0) options.rank = nargs->rank;
    if (std::filesystem::is_directory(nargs->input)) {
      if (nargs->rank >= 0) {
        throw flag_error("--rank", std::to_string(nargs->rank),
                         "one rank for a folder of ranks: each file's rank comes from its "
                         "ssgd/rank mark or its name");
      }
      import_rank_folder(nargs->input, rank_files(nargs->input, {".sqlite"}),
                         "Nsight Systems SQLite exports (*.sqlite)", nargs->out, nargs->force,
                         [&](const fs::path& f, const fs::path& tmp,
                             std::optional<std::int32_t> name_rank) {
                           trace::NsysImportOptions one = options;
                           one.name_rank = name_rank;
                           one.require_rank = true;
                           const auto s = trace::import_nsys(f, tmp, one);
                           return RankImport{s.rank, s.rank_source, s.events_written};
                         });
      return;
    }
    if (nargs->force) throw flag_error("--force", "merges a folder of rank files: FILE is one file");
    check_outputs({&nargs->out}, {nargs->input});
    check_input(nargs->input, "FILE");
    std::optional<trace::NsysImportSummary> summary;
    write_output(nargs->out, [&] { summary = trace::import_nsys(nargs->input, nargs->out.path, options); });
    trace::print_nsys_import_summary(*summary, std::cout);
#else
    throw std::runtime_error(
        "ssgd import nsys: this ssgd was built without SQLite (install libsqlite3-dev and "
        "configure again)");
#endif
  });

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
