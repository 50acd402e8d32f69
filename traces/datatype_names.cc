#include "traces/datatype_names.h"

#include <array>
#include <utility>

namespace ssgd::trace {
namespace {

struct Datatype {
  std::string_view trace;  // the trace's spelling
  std::int64_t size_bytes;
  std::string_view nccl;              // ncclDataType_t
  std::string_view c10;               // c10::ScalarType name
  std::string_view kernel_token;      // NCCL >= 2.19 kernel names
  std::string_view old_kernel_token;  // older kernel names
};

// ScalarType names from c10/core/ScalarType.h; NCCL names from nccl.h.
constexpr std::array<Datatype, 13> kDatatypes{{
    {"int8", 1, "ncclInt8", "Char", "i8", "int8_t"},
    {"int16", 2, "", "Short", "", ""},
    {"uint8", 1, "ncclUint8", "Byte", "u8", "uint8_t"},
    {"int32", 4, "ncclInt32", "Int", "i32", "int32_t"},
    {"uint32", 4, "ncclUint32", "UInt32", "u32", "uint32_t"},
    {"int64", 8, "ncclInt64", "Long", "i64", "int64_t"},
    {"uint64", 8, "ncclUint64", "UInt64", "u64", "uint64_t"},
    {"float16", 2, "ncclFloat16", "Half", "f16", "half"},
    {"float32", 4, "ncclFloat32", "Float", "f32", "float"},
    {"float64", 8, "ncclFloat64", "Double", "f64", "double"},
    {"bfloat16", 2, "ncclBfloat16", "BFloat16", "bf16", "bfloat16"},
    {"float8e4m3", 1, "ncclFloat8e4m3", "Float8_e4m3fn", "f8e4m3", ""},
    {"float8e5m2", 1, "ncclFloat8e5m2", "Float8_e5m2", "f8e5m2", ""},
}};

}  // namespace

std::string_view datatype_from_nccl(std::string_view nccl_name) {
  for (const auto& d : kDatatypes) {
    if (!d.nccl.empty() && nccl_name == d.nccl) return d.trace;
  }
  return nccl_name;
}

std::string_view datatype_from_c10(std::string_view scalar_type) {
  // c10d sends a Bool tensor as bytes.
  if (scalar_type == "Bool") return "uint8";
  for (const auto& d : kDatatypes) {
    if (scalar_type == d.c10) return d.trace;
  }
  return {};
}

std::string_view datatype_from_kernel_token(std::string_view token) {
  if (token.empty()) return {};
  for (const auto& d : kDatatypes) {
    if (token == d.kernel_token || token == d.old_kernel_token) return d.trace;
  }
  return {};
}

std::string_view datatype_from_torch_type(std::string_view type_name) {
  // c10/util/typeid.h names its types by demangling them (GCC's spelling).
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kTorch{{
      {"float", "float32"},
      {"double", "float64"},
      {"c10::Half", "float16"},
      {"c10::BFloat16", "bfloat16"},
      {"long int", "int64"},
      {"long", "int64"},
      {"int64_t", "int64"},
      {"int", "int32"},
      {"short int", "int16"},
      {"short", "int16"},
      {"signed char", "int8"},
      {"unsigned char", "uint8"},
      {"bool", "uint8"},
      {"c10::Float8_e4m3fn", "float8e4m3"},
      {"c10::Float8_e5m2", "float8e5m2"},
  }};
  for (const auto& [torch, trace] : kTorch) {
    if (type_name == torch) return trace;
  }
  return {};
}

std::int64_t datatype_size_bytes(std::string_view datatype) {
  for (const auto& d : kDatatypes) {
    if (datatype == d.trace) return d.size_bytes;
  }
  return 0;
}

}  // namespace ssgd::trace
