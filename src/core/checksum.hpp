#pragma once
// FNV-1a, the 64-bit checksum of checkpoint and model files (detects damaged or edited contents).
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

namespace hpt {

constexpr std::uint64_t kChecksumStart = 14695981039346656037ULL;

// Continues the checksum `h` over `bytes` bytes at `data`.
inline std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

// Continues the checksum `h` over the bytes of a View (copied to the host first if needed).
template <class ViewType>
std::uint64_t fnv1a_view(std::uint64_t h, const ViewType& view) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  return fnv1a(h, host.data(), host.span() * sizeof(typename ViewType::value_type));
}

}  // namespace hpt
