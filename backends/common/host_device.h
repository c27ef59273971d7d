// MX_HOST_DEVICE marks a function nvcc compiles for the host and the
// device; plain C++ compilers see an ordinary inline function.
#ifndef MXCORE_BACKENDS_COMMON_HOST_DEVICE_H_
#define MXCORE_BACKENDS_COMMON_HOST_DEVICE_H_

#ifdef __CUDACC__
#define MX_HOST_DEVICE __host__ __device__
#else
#define MX_HOST_DEVICE
#endif

#endif  // MXCORE_BACKENDS_COMMON_HOST_DEVICE_H_
