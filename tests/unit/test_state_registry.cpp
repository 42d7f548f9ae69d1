// StateRegistry (train/state_registry.hpp): what is declared once is saved, loaded and checksummed
// alike; a changed entry changes the checksum; a missing entry is an InputError naming it.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/error.hpp"
#include "core/types.hpp"
#include "io/hdf5_file.hpp"
#include "test_hdf5_support.hpp"
#include "train/state_registry.hpp"

namespace {

struct State {
  hpt::View2<float> a{"a", 3, 4};
  hpt::View1<double> b{"b", 5};
  std::int64_t counter = 0;

  hpt::train::StateRegistry registry() {
    hpt::train::StateRegistry r;
    r.add_view("group/a", a);
    r.add_view("b", b);
    r.add_int(
        "group/inner/counter", [this] { return counter; }, [this](std::int64_t v) { counter = v; });
    return r;
  }
  void fill(double base) {
    auto ha = Kokkos::create_mirror_view(a);
    auto hb = Kokkos::create_mirror_view(b);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) ha(i, j) = float(base + i * 4 + j);
    for (int i = 0; i < 5; ++i) hb(i) = base * 0.5 + i;
    Kokkos::deep_copy(a, ha);
    Kokkos::deep_copy(b, hb);
    counter = std::int64_t(base) * 7;
  }
};

TEST(StateRegistry, SaveLoadRoundTripsEveryEntryAndTheChecksum) {
  hpt::test::TempDir dir;
  State src, dst;
  src.fill(3);
  const auto reg = src.registry();
  {
    auto f = hpt::io::H5File::create(dir.file("s.h5"));
    reg.save(f.root());
  }
  auto f = hpt::io::H5File::open_read(dir.file("s.h5"));
  const auto into = dst.registry();
  EXPECT_NE(into.checksum(), reg.checksum());
  into.load(f.root());
  EXPECT_EQ(into.checksum(), reg.checksum());
  EXPECT_EQ(dst.counter, 21);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dst.b);
  EXPECT_EQ(hb(4), 1.5 + 4);
}

TEST(StateRegistry, EveryEntryChangesTheChecksum) {
  State s;
  s.fill(1);
  const auto reg = s.registry();
  const auto base = reg.checksum();
  Kokkos::deep_copy(Kokkos::subview(s.a, 2, 3), 100.0f);
  EXPECT_NE(reg.checksum(), base);
  s.fill(1);
  Kokkos::deep_copy(Kokkos::subview(s.b, 0), -1.0);
  EXPECT_NE(reg.checksum(), base);
  s.fill(1);
  s.counter += 1;
  EXPECT_NE(reg.checksum(), base);
  s.fill(1);
  EXPECT_EQ(reg.checksum(), base);
}

TEST(StateRegistry, MissingEntryIsAnInputErrorNamingIt) {
  hpt::test::TempDir dir;
  {
    auto f = hpt::io::H5File::create(dir.file("partial.h5"));
    f.root().create_group("group");
  }
  State s;
  auto f = hpt::io::H5File::open_read(dir.file("partial.h5"));
  try {
    s.registry().load(f.root());
    FAIL() << "no error";
  } catch (const hpt::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a"), std::string::npos) << e.what();
  }
}

}  // namespace
