#include "dag/kernel_names.h"

#include <algorithm>
#include <cctype>

namespace ssgd::dag {

bool is_optimizer_kernel(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* p : {"multi_tensor_apply", "adam", "sgd", "lamb", "adagrad", "rmsprop",
                        "optimizer", "momentum_update", "fused_update"}) {
    if (name.find(p) != std::string::npos) return true;
  }
  return false;
}

bool is_nccl_kernel(const std::string& name) { return name.rfind("nccl", 0) == 0; }

}  // namespace ssgd::dag
