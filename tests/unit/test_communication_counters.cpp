// CommunicationCounters: the counts of a data-parallel run's collectives by kind, and the share of
// a run (since an earlier copy).
#include <gtest/gtest.h>

#include "core/communication_counters.hpp"

TEST(CommunicationCounters, SinceSubtractsAnEarlierCopyPerTraffic) {
  hpt::CommunicationCounters earlier, now;
  now[hpt::Traffic::Gradient] = {3, 1200, 0.5};
  now[hpt::Traffic::Control] = {4, 32, 0.25};
  earlier[hpt::Traffic::Gradient] = {1, 400, 0.125};
  const hpt::CommunicationCounters d = now.since(earlier);
  EXPECT_EQ(d[hpt::Traffic::Gradient].calls, 2);
  EXPECT_EQ(d[hpt::Traffic::Gradient].bytes, 800);
  EXPECT_EQ(d[hpt::Traffic::Gradient].seconds, 0.375);
  EXPECT_EQ(d[hpt::Traffic::Control].bytes, 32);
  EXPECT_EQ(d.total().calls, 6);
  EXPECT_EQ(d.total().bytes, 832);
  EXPECT_STREQ(hpt::traffic_name(hpt::Traffic::Evaluation), "evaluation");
}
