#include "job/output_tee.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mutex>
#include <string>

namespace ferry::job {
namespace {

class Collect final : public OutputSink {
 public:
  void Write(std::string_view chunk, bool is_stderr) override {
    std::lock_guard lock(mu_);
    (is_stderr ? err : out) += chunk;
  }
  std::mutex mu_;
  std::string out, err;
};

std::string Drain(int fd) {
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  return text;
}

TEST(OutputTeeTest, CopiesEachStreamToItsDescriptorAndToTheSink) {
  int term_out[2], term_err[2];
  ASSERT_EQ(::pipe(term_out), 0);
  ASSERT_EQ(::pipe(term_err), 0);
  Collect sink;
  auto tee = OutputTee::Open(sink, term_out[1], term_err[1]);
  ASSERT_TRUE(tee.ok());
  const int cout = (*tee)->child_stdout(), cerr = (*tee)->child_stderr();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(cout, 1);
    ::dup2(cerr, 2);
    ::execlp("sh", "sh", "-c", "echo hello; echo oops >&2; echo bye", nullptr);
    ::_exit(127);
  }
  (*tee)->Start();
  int status = 0;
  ::waitpid(pid, &status, 0);
  (*tee)->Finish(std::chrono::seconds(5));
  ::close(term_out[1]);
  ::close(term_err[1]);
  EXPECT_EQ(Drain(term_out[0]), "hello\nbye\n");
  EXPECT_EQ(Drain(term_err[0]), "oops\n");
  EXPECT_EQ(sink.out, "hello\nbye\n");
  EXPECT_EQ(sink.err, "oops\n");
}

TEST(OutputTeeTest, AClosedTerminalDoesNotBlockTheCommand) {
  int term[2];
  ASSERT_EQ(::pipe(term), 0);
  ::close(term[0]);  // nobody reads ferry's stdout: writes fail with EPIPE
  Collect sink;
  auto tee = OutputTee::Open(sink, term[1], term[1]);
  ASSERT_TRUE(tee.ok());
  const int cout = (*tee)->child_stdout(), cerr = (*tee)->child_stderr();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(cout, 1);
    ::dup2(cerr, 2);
    // 1 MiB: far more than a pipe holds.
    ::execlp("sh", "sh", "-c", "head -c 1048576 /dev/zero", nullptr);
    ::_exit(127);
  }
  (*tee)->Start();
  int status = 0;
  ::waitpid(pid, &status, 0);
  (*tee)->Finish(std::chrono::seconds(5));
  ::close(term[1]);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(sink.out.size(), 1048576u);
}

TEST(OutputTeeTest, FinishGivesUpOnAWriterThatStays) {
  Collect sink;
  auto tee = OutputTee::Open(sink, 1, 2);
  ASSERT_TRUE(tee.ok());
  int keep = ::dup((*tee)->child_stdout());  // a leftover process still holding the pipe
  (*tee)->Start();
  ASSERT_EQ(::write(keep, "x", 1), 1);
  auto start = std::chrono::steady_clock::now();
  (*tee)->Finish(std::chrono::milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  ::close(keep);
}

}  // namespace
}  // namespace ferry::job
