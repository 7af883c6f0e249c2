//===- CompileCacheTest.cpp - libraries cached by what made them ----------===//

#include "tandem/Lowering/CompileCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <fstream>

using namespace tandem::lowering;

namespace {

struct CompileCacheTest : ::testing::Test {
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("tandem-cache-test", path));
    dir = std::string(path);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  /// Builds by writing `text` to the output; counts builds.
  llvm::Expected<CompiledLibrary> build(std::vector<std::string> key,
                                        const std::string &text) {
    return buildCached(dir, key, ".lib", [&](CacheBuild &b) -> llvm::Error {
      ++builds;
      llvm::Expected<std::string> scratch = b.temporary(".tmp");
      if (!scratch)
        return scratch.takeError();
      std::ofstream(*scratch) << "temporary";
      std::ofstream(b.output()) << text;
      return llvm::Error::success();
    });
  }

  /// Files in the cache directory.
  int files() {
    int count = 0;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      ++count;
    return count;
  }

  std::string dir;
  int builds = 0;
};

TEST_F(CompileCacheTest, ASecondBuildOfTheSameKeyIsAHit) {
  auto first = build({"source", "c++", "-O3"}, "one");
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  EXPECT_FALSE(first->cached);
  auto second = build({"source", "c++", "-O3"}, "two");
  ASSERT_TRUE(static_cast<bool>(second));
  EXPECT_TRUE(second->cached);
  EXPECT_EQ(first->path, second->path);
  EXPECT_EQ(builds, 1);
  std::ifstream in(second->path);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "one");
  // Only the library is left: the temporaries and the partial file are gone.
  EXPECT_EQ(files(), 1);
  EXPECT_EQ(llvm::sys::path::extension(first->path), ".lib");
}

TEST_F(CompileCacheTest, EveryPartAndItsBoundariesAreInTheKey) {
  auto ab = build({"ab", "c"}, "x");
  auto a = build({"a", "bc"}, "y");
  auto flag = build({"ab", "c", "-g"}, "z");
  ASSERT_TRUE(ab && a && flag);
  EXPECT_NE(ab->path, a->path);
  EXPECT_NE(ab->path, flag->path);
  EXPECT_EQ(builds, 3);
}

TEST_F(CompileCacheTest, AFailedBuildLeavesNothing) {
  auto failed = buildCached(dir, {"bad"}, ".lib", [&](CacheBuild &b) {
    std::ofstream(b.output()) << "partial";
    return llvm::createStringError("compiler said no");
  });
  ASSERT_FALSE(static_cast<bool>(failed));
  EXPECT_EQ(llvm::toString(failed.takeError()), "compiler said no");
  EXPECT_EQ(files(), 0);
  // The next build of that key runs again.
  auto retry = build({"bad"}, "ok");
  ASSERT_TRUE(static_cast<bool>(retry));
  EXPECT_FALSE(retry->cached);
}

TEST_F(CompileCacheTest, TheReportIsKeptWithTheLibrary) {
  auto first = buildCached(dir, {"reported"}, ".lib", [&](CacheBuild &b) {
    std::ofstream(b.output()) << "library";
    b.setReport("2 kernels, 0 bytes spilled");
    return llvm::Error::success();
  });
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  EXPECT_FALSE(first->cached);
  EXPECT_EQ(first->report, "2 kernels, 0 bytes spilled");
  // A hit reads it back without building.
  auto second = buildCached(dir, {"reported"}, ".lib", [&](CacheBuild &) {
    ADD_FAILURE() << "a hit must not build";
    return llvm::Error::success();
  });
  ASSERT_TRUE(static_cast<bool>(second));
  EXPECT_TRUE(second->cached);
  EXPECT_EQ(second->report, "2 kernels, 0 bytes spilled");
  // The library and its report, nothing else.
  EXPECT_EQ(files(), 2);
  // A build without a report leaves none.
  auto plain = build({"plain"}, "x");
  ASSERT_TRUE(static_cast<bool>(plain));
  EXPECT_EQ(plain->report, "");
  EXPECT_EQ(files(), 3);
}

} // namespace
