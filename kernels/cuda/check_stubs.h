/* Declarations of the CUDA intrinsics the kernels use, so clang can syntax- and type-check the
 * kernels without the CUDA toolkit (scripts/check-kernels.sh). Signatures as in CUDA 13. */
#include "__clang_cuda_builtin_vars.h"
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
__device__ void __syncthreads(void);
__device__ unsigned int __ballot_sync(unsigned int mask, int predicate);
__device__ unsigned long long atomicAdd(unsigned long long *address, unsigned long long val);
