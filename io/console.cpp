#include "io/console.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/version.hpp"

namespace hpt::io {

std::string TextTable::str() const {
  std::vector<std::size_t> w(header_.size(), 0);
  for (std::size_t c = 0; c < header_.size(); ++c) w[c] = header_[c].size();
  for (const auto& r : rows_)
    for (std::size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  std::ostringstream os;
  auto line = [&](const std::vector<std::string>& r) {
    for (std::size_t c = 0; c < w.size(); ++c) {
      const std::string cell = c < r.size() ? r[c] : "";
      os << (c ? "  " : "") << std::string(w[c] - cell.size(), ' ') << cell;
    }
    os << "\n";
  };
  line(header_);
  std::size_t total = 0;
  for (auto x : w) total += x + 2;
  os << std::string(total > 2 ? total - 2 : 0, '-') << "\n";
  for (const auto& r : rows_) line(r);
  return os.str();
}

std::string TextTable::csv() const {
  std::ostringstream os;
  auto line = [&](const std::vector<std::string>& r) {
    for (std::size_t c = 0; c < r.size(); ++c) os << (c ? "," : "") << r[c];
    os << "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
  return os.str();
}

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string backend_description() {
  std::ostringstream os;
  os << Kokkos::DefaultExecutionSpace::name();
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>::value) {
    cudaDeviceProp prop;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    os << " (" << prop.name << ", " << prop.multiProcessorCount << " SMs)";
    return os.str();
  }
#endif
  os << " (" << Kokkos::DefaultHostExecutionSpace().concurrency() << " threads)";
  return os.str();
}

std::string run_header(const std::string& deck_path, const std::string& resolved_ini,
                       const std::vector<std::string>& devices) {
  std::ostringstream os;
  os << "hpt " << kVersion << "\n"
     << "  backend   " << backend_description() << "\n";
  for (std::size_t i = 0; i < devices.size(); ++i)
    os << (i == 0 ? "  devices   " : "            ") << devices[i] << "\n";
  os << "  precision " << kPrecision << "\n"
     << "  Kokkos    " << KOKKOS_VERSION / 10000 << "." << (KOKKOS_VERSION / 100) % 100 << "."
     << KOKKOS_VERSION % 100 << "\n"
     << "  deck      " << deck_path << "\n"
     << "resolved configuration:\n";
  std::istringstream in(resolved_ini);
  for (std::string l; std::getline(in, l);) os << "  " << l << "\n";
  return os.str();
}

}  // namespace hpt::io
