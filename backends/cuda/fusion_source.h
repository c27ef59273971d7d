// The CUDA source of the kernel that runs a fused elementwise program
// (backends/common/elemwise_program.h) on the GPU, compiled at run time by
// NVRTC (fusion.cc). Kept apart so that the generated source is checked by
// compiling it with NVRTC on a machine without a GPU
// (fusion_source_test.cc).
//
//   const std::string cu = FusedKernelSource(program, MX_DTYPE_FLOAT16,
//                                            {MX_REQ_WRITE});
#ifndef MXCORE_BACKENDS_CUDA_FUSION_SOURCE_H_
#define MXCORE_BACKENDS_CUDA_FUSION_SOURCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "backends/common/elemwise_program.h"

namespace mx_cuda {

// extern "C" __global__ mx_fused(inputs used..., outputs written..., long
// long n), a grid-stride loop over n elements. dtype float32 or float64
// computes in that type; float16 computes in float and rounds each
// instruction's result to float16 as the unfused kernels store theirs (the
// fused graph's bits are the unfused one's). req: one per program output
// (MX_REQ_NULL outputs get no parameter; MX_REQ_ADD adds).
std::string FusedKernelSource(const mx_elemwise::Program& p, int dtype,
                              const std::vector<int32_t>& req);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_FUSION_SOURCE_H_
