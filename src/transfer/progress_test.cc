// What the progress line promises: an ETA that admits stalls and unfinished listings.
#include "transfer/progress.h"

#include <gtest/gtest.h>

namespace ferry::transfer {
namespace {

TEST(ProgressTest, EtaUsesTheRecentRate) {
  EXPECT_EQ(EtaText(100, 1100, 10.0, 0, true), "100s");
  EXPECT_EQ(EtaText(0, 1000, 0, 0, true), "-");
  EXPECT_EQ(EtaText(1000, 1000, 50.0, 0, true), "-");
}

TEST(ProgressTest, StalledTransferSaysSoInsteadOfAnEta) {
  // 294.9 of 300 MiB with no byte for 150 s: not "ETA 2s".
  EXPECT_EQ(EtaText(294900, 300000, 0, 150, true), "stalled 150s");
  EXPECT_EQ(EtaText(294900, 300000, 0, 4, true), "-");
}

TEST(ProgressTest, NoEtaWhileTheTotalIsStillGrowing) {
  EXPECT_EQ(EtaText(10, 20, 5.0, 0, false), "listing");
}

}  // namespace
}  // namespace ferry::transfer
