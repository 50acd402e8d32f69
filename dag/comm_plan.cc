#include "dag/comm_plan.h"

namespace ssgd::dag {

const char* to_string(CommOp op) {
  switch (op) {
    case CommOp::kAllReduce: return "all_reduce";
    case CommOp::kReduceScatter: return "reduce_scatter";
    case CommOp::kAllGather: return "all_gather";
  }
  return "?";
}

}  // namespace ssgd::dag
