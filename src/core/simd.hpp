#pragma once
#include <Kokkos_Macros.hpp>
#include <cstddef>

// HPT_SIMD before a loop whose iterations are independent asks the host compiler to vectorise it
// (`omp simd`; GCC does not vectorise the unit loops of the tiled rollout on its own). It changes
// no result: each iteration keeps its own order of operations. Empty where OpenMP is off and under
// nvcc (on a GPU the loop runs in one thread).
#if defined(_OPENMP) && !defined(__CUDACC__)
#define HPT_SIMD _Pragma("omp simd")
#else
#define HPT_SIMD
#endif

// HPT_UNROLL(n) before a loop asks nvcc's device pass to unroll it n times (registers renamed
// across iterations instead of copied), HPT_UNROLL_ALL completely (a loop over a register block:
// its arrays then stay in registers); nothing elsewhere. Changes no result.
#define HPT_PRAGMA_(x) _Pragma(#x)
#if defined(__CUDA_ARCH__)
#define HPT_UNROLL(n) HPT_PRAGMA_(unroll n)
#define HPT_UNROLL_ALL _Pragma("unroll")
#else
#define HPT_UNROLL(n)
#define HPT_UNROLL_ALL
#endif

namespace hpt {

// p, promised to the compiler to lie on a 16-byte boundary when N elements of T fill whole 16-byte
// words (so N consecutive loads may become vector loads, on a GPU LDS.128); p unchanged otherwise.
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION const T* assume_vector_aligned(const T* p) {
  if constexpr ((N * sizeof(T)) % 16 == 0) {
    return static_cast<const T*>(__builtin_assume_aligned(p, 16));
  } else {
    return p;
  }
}

// p, promised to lie on the largest of a 16- or 8-byte boundary that N elements of T fill a whole
// number of times (so N consecutive loads may become vector loads, on a GPU LDS.64/LDG.64 where
// LDS.128 does not apply); p unchanged when neither does. The caller's offsets from an aligned base
// must be multiples of N elements.
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION const T* assume_block_aligned(const T* p) {
  if constexpr ((N * sizeof(T)) % 16 == 0) {
    return static_cast<const T*>(__builtin_assume_aligned(p, 16));
  } else if constexpr ((N * sizeof(T)) % 8 == 0) {
    return static_cast<const T*>(__builtin_assume_aligned(p, 8));
  } else {
    return p;
  }
}

// out[0..N) = p[0..N); as one 8- or 16-byte load where N elements of T fill exactly that (p must
// then lie on that boundary; on a GPU LDG.64/LDG.128), else element by element.
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION void load_block(const T* p, T* out) {
  constexpr std::size_t bytes = N * sizeof(T);
  if constexpr (bytes == 8 || bytes == 16) {
    struct alignas(bytes) Block {
      T v[N];
    };
    const Block b = *reinterpret_cast<const Block*>(p);
    for (int i = 0; i < N; ++i) out[i] = b.v[i];
  } else {
    for (int i = 0; i < N; ++i) out[i] = p[i];
  }
}

// out[0..N) = p[0..N) from team scratch (p on the boundary that assume_block_aligned<N> promises):
// on a GPU as shared-memory loads (ld.shared, LDS; Kokkos hands its scratch out as a generic
// pointer, whose loads the compiler cannot place in shared memory), floats in 16- or 8-byte vectors
// where N of them fill them; plain loads elsewhere. Same values.
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION void load_block_shared(const T* p, T* out) {
#if defined(__CUDA_ARCH__)
  [[maybe_unused]] const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  constexpr std::size_t bytes = N * sizeof(T);
  if constexpr (sizeof(T) == 4 && bytes % 16 == 0) {
    for (int i = 0; i < N; i += 4) {
      float x, y, z, w;
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(x), "=f"(y), "=f"(z), "=f"(w)
                   : "r"(a + 4 * i));
      out[i] = T(x);
      out[i + 1] = T(y);
      out[i + 2] = T(z);
      out[i + 3] = T(w);
    }
  } else if constexpr (sizeof(T) == 4 && bytes % 8 == 0) {
    for (int i = 0; i < N; i += 2) {
      float x, y;
      asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(x), "=f"(y) : "r"(a + 4 * i));
      out[i] = T(x);
      out[i + 1] = T(y);
    }
  } else {  // double, or floats that fill no vector: plain loads
    for (int i = 0; i < N; ++i) out[i] = p[i];
  }
#else
  const T* q = assume_block_aligned<N>(p);
  for (int i = 0; i < N; ++i) out[i] = q[i];
#endif
}

}  // namespace hpt
