// The Store conformance suite against a real Ceph RGW, path-style and virtual-hosted.
#include "rgw_env.h"
#include "storage/testing/store_conformance.h"

namespace ferry::storage::testing {

INSTANTIATE_TEST_SUITE_P(
    S3, StoreConformanceTest,
    ::testing::Values(StoreUnderTest{"rgw_path_style",
                                     [] { return MakeS3Store(ferry::testing::RgwStoreOptions()); }},
                      StoreUnderTest{
                          "rgw_virtual_host",
                          [] { return MakeS3Store(ferry::testing::RgwStoreOptions("", true)); }}),
    [](const auto& info) { return info.param.name; });

}  // namespace ferry::storage::testing
