#pragma once
// Element types of collectives as each library spells them, turned into the
// trace's spelling (v1::Collective.datatype: "float32", "bfloat16", ...):
// NCCL's ncclDataType_t names ("ncclFloat32"), c10's ScalarType names
// (record_param_comms' "dtype": "Float", "BFloat16") and the type tokens of
// NCCL kernel names ("f32" since NCCL 2.19, "float" and "int8_t" before).

#include <cstdint>
#include <string_view>

namespace ssgd::trace {

// "ncclFloat32" -> "float32", "ncclBfloat16" -> "bfloat16"; an unknown name
// is returned as given.
std::string_view datatype_from_nccl(std::string_view nccl_name);

// "Float" -> "float32", "BFloat16" -> "bfloat16", "Long" -> "int64"; ""
// when unknown.
std::string_view datatype_from_c10(std::string_view scalar_type);

// An NCCL kernel name's type token: "f32", "bf16", "u8" (new), "float",
// "half", "int8_t" (old) -> the trace's spelling; "" when unknown.
std::string_view datatype_from_kernel_token(std::string_view token);

// A tensor's type as the PyTorch profiler records it with record_shapes
// ("Input type": the demangled C++ type of its TypeMeta): "float",
// "double", "c10::Half", "c10::BFloat16", "long int", "int", "signed char",
// "unsigned char", "bool" -> the trace's spelling; "" when unknown (not a
// tensor, or an unusual type).
std::string_view datatype_from_torch_type(std::string_view type_name);

// Bytes per element of a trace datatype ("float32" -> 4); 0 when unknown.
std::int64_t datatype_size_bytes(std::string_view datatype);

}  // namespace ssgd::trace
