#pragma once
// HPT_SIMD before a loop whose iterations are independent asks the host compiler to vectorise it
// (`omp simd`; GCC does not vectorise the unit loops of the tiled rollout on its own). It changes
// no result: each iteration keeps its own order of operations. Empty where OpenMP is off and under
// nvcc (on a GPU the loop runs in one thread).
#if defined(_OPENMP) && !defined(__CUDACC__)
#define HPT_SIMD _Pragma("omp simd")
#else
#define HPT_SIMD
#endif
