#include "job/mountinfo.h"

#include <gtest/gtest.h>

namespace ferry::job {
namespace {

// Recorded from real systems: a container (overlay root), a Kubernetes pod (emptyDir on disk
// and in memory, a CSI PVC), an NFS client and an s3fs mount.
constexpr const char* kSample = R"(
1046 975 0:112 / / rw,relatime master:413 - overlay overlay rw,lowerdir=/var/lib/containerd/l1,upperdir=/var/lib/containerd/u1,workdir=/var/lib/containerd/w1
1047 1046 0:115 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=65536k
1050 1046 259:1 /var/lib/kubelet/pods/7f1e/volumes/kubernetes.io~empty-dir/scratch /scratch rw,relatime - ext4 /dev/nvme0n1p1 rw
1051 1046 0:120 / /dev/fast rw,relatime - tmpfs tmpfs rw,size=8g
1052 1046 0:121 /var/lib/kubelet/pods/7f1e/volumes/kubernetes.io~empty-dir/mem /cache rw,relatime - tmpfs tmpfs rw
1053 1046 0:55 /var/lib/kubelet/pods/7f1e/volumes/kubernetes.io~csi/pvc-123/mount /ckpt rw,relatime - ext4 /dev/rbd0 rw
1054 1046 0:60 / /mnt/nas\040share rw,relatime - nfs4 nas.example:/export/data rw,vers=4.2,rsize=1048576,wsize=1048576,soft,timeo=600,retrans=2,sec=sys
1055 1046 0:61 / /mnt/s3 rw,nosuid,nodev,relatime - fuse.s3fs s3fs rw,user_id=0,group_id=0
)";

TEST(MountInfoTest, ParsesAndFindsTheHoldingMount) {
  auto mounts = ParseMountInfo(kSample);
  ASSERT_EQ(mounts.size(), 8u);
  EXPECT_EQ(mounts[6].mount_point, "/mnt/nas share");  // \040 decoded
  EXPECT_EQ(FindMount(mounts, "/output/model.pt")->fstype, "overlay");
  EXPECT_EQ(FindMount(mounts, "/scratch/x")->mount_point, "/scratch");
  EXPECT_EQ(FindMount(mounts, "/scratchy")->mount_point, "/");  // not a path prefix
}

TEST(MountInfoTest, ClassifiesPersistence) {
  auto mounts = ParseMountInfo(kSample);
  auto verdict = [&](const char* path) { return ClassifyMount(*FindMount(mounts, path)); };
  EXPECT_EQ(verdict("/output").persistence, Persistence::kContainer);
  EXPECT_EQ(verdict("/dev/fast/x").persistence, Persistence::kRam);
  EXPECT_EQ(verdict("/scratch").persistence, Persistence::kPod);
  EXPECT_EQ(verdict("/scratch").kind, "Kubernetes emptyDir (node disk)");
  EXPECT_EQ(verdict("/cache").kind, "Kubernetes emptyDir (medium: Memory)");
  EXPECT_EQ(verdict("/ckpt").persistence, Persistence::kNetwork);
  auto nfs = verdict("/mnt/nas share/train");
  EXPECT_EQ(nfs.persistence, Persistence::kNetwork);
  bool warned_soft = false, nconnect_hint = false;
  for (const auto& n : nfs.notes) {
    warned_soft |= n.find("'soft'") != std::string::npos;
    nconnect_hint |= n.find("nconnect=8") != std::string::npos;
  }
  EXPECT_TRUE(warned_soft);
  EXPECT_TRUE(nconnect_hint);
  EXPECT_EQ(verdict("/mnt/s3/x").kind, "FUSE (s3fs)");
}

}  // namespace
}  // namespace ferry::job
