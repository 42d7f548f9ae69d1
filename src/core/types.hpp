#pragma once
// Basic types shared by every layer: the working precision and View aliases.
#include <Kokkos_Core.hpp>

namespace hpt {

#if defined(HPT_PRECISION_DOUBLE)
using real = double;
#else
using real = float;
#endif

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostExec = Kokkos::DefaultHostExecutionSpace;  // an execution space, unlike Kokkos::HostSpace

// Views are LayoutRight everywhere so host reference loops and HDF5 (row-major) agree.
template <class T, class Mem = MemSpace>
using View1 = Kokkos::View<T*, Kokkos::LayoutRight, Mem>;
template <class T, class Mem = MemSpace>
using View2 = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;
template <class T, class Mem = MemSpace>
using View3 = Kokkos::View<T***, Kokkos::LayoutRight, Mem>;
template <class T, class Mem = MemSpace>
using View4 = Kokkos::View<T****, Kokkos::LayoutRight, Mem>;

// Number of features the encoders produce (docs/method.md#encoders).
constexpr int kFeatures = 64;

}  // namespace hpt
