//===- CompilerTest.cpp - compiling, caching and compiler errors ----------===//

#include "tandem/Target/CPU/Compiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

using namespace tandem::cpu;

namespace {

class CompilerTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tandem-cpu-cache-test",
                                                      cacheDir));
    options.cacheDir = std::string(cacheDir);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(cacheDir); }

  llvm::SmallString<128> cacheDir;
  CompileOptions options;
};

TEST_F(CompilerTest, SecondCompilationOfTheSameSourceIsACacheHit) {
  const char *source = "extern \"C\" int tandem_answer() { return 42; }\n";
  auto first = compileSource(source, options);
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  EXPECT_FALSE(first->cached);
  EXPECT_TRUE(llvm::sys::fs::exists(first->path));

  auto second = compileSource(source, options);
  ASSERT_TRUE(static_cast<bool>(second)) << llvm::toString(second.takeError());
  EXPECT_TRUE(second->cached);
  EXPECT_EQ(second->path, first->path);

  // Different source, different library.
  auto other = compileSource("extern \"C\" int tandem_answer() { return 7; }\n",
                             options);
  ASSERT_TRUE(static_cast<bool>(other)) << llvm::toString(other.takeError());
  EXPECT_NE(other->path, first->path);
}

TEST_F(CompilerTest, CompileErrorsCarryTheCompilersOutput) {
  auto result = compileSource("this is not C++;\n", options);
  ASSERT_FALSE(static_cast<bool>(result));
  std::string message = llvm::toString(result.takeError());
  EXPECT_NE(message.find("C++ compilation failed"), std::string::npos)
      << message;
  EXPECT_NE(message.find("error"), std::string::npos) << message;
  // Nothing half-written stays in the cache.
  std::error_code ec;
  unsigned files = 0;
  for (llvm::sys::fs::directory_iterator it(cacheDir, ec), end;
       it != end && !ec; it.increment(ec))
    ++files;
  EXPECT_EQ(files, 0u);
}

TEST_F(CompilerTest, MissingCompilerIsAClearError) {
  options.compiler = "tandem-no-such-compiler";
  auto result = compileSource("int x;\n", options);
  ASSERT_FALSE(static_cast<bool>(result));
  EXPECT_EQ(llvm::toString(result.takeError()),
            "C++ compiler 'tandem-no-such-compiler' not found in PATH (set "
            "TANDEM_CXX)");

  options.compiler = "/nonexistent/bin/c++";
  result = compileSource("int y;\n", options);
  ASSERT_FALSE(static_cast<bool>(result));
  EXPECT_NE(llvm::toString(result.takeError()).find("'/nonexistent/bin/c++'"),
            std::string::npos);
}

} // namespace
