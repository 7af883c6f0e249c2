//===- OpCoverageTest.cpp - every nn op is covered by every test aspect ---===//
//
// Enumerates the ops registered by the nn and mpmd dialects and checks, for
// each test "aspect" (round-trip, and later evaluator, gradient, emitter),
// that some test file of that aspect covers the op. A new op without tests
// fails here with the list of ops that lack coverage.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/CostModel.h"
#include "tandem/Dialect/NN/Transforms/Autodiff.h"
#include "tandem/Eval/Kernels.h"
#include "tandem/InitAll.h"
#include "tandem/Target/CPU/CppEmitter.h"
#include "tandem/Target/CUDA/CudaEmitter.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <ostream>
#include <string>
#include <vector>

#ifndef TANDEM_TEST_SOURCE_DIR
#error "TANDEM_TEST_SOURCE_DIR must name the source tree"
#endif

using llvm::StringRef;

namespace {

//===----------------------------------------------------------------------===//
// The checker
//===----------------------------------------------------------------------===//

/// A test file: its path (for messages) and its text.
struct TestFile {
  std::string path;
  std::string text;
};

/// Whether `text` (a whole test file) covers the op named `opName` (e.g.
/// "nn.add") for one aspect.
using CoversFn = bool (*)(StringRef text, StringRef opName);

/// One kind of test every op of a dialect must have.
///
/// To add an aspect (the evaluator, gradient or emitter issues do), append a
/// row to `kAspects` below:
///   - `name`: shown in test names and failure messages; kebab-case.
///   - `dialect`: whose registered ops must be covered ("nn", "mpmd").
///   - `directory`: the folder of that aspect's tests, relative to the source
///     root; every file under it (recursively) with a name ending in
///     `extension` is read.
///   - `covers`: how one file counts as covering an op. Reuse
///     `hasCheckLineMentioning` for FileCheck-based lit tests, or write a
///     predicate for another format (e.g. a gtest source naming the op in a
///     TEST, or a JSON manifest of evaluator cases).
struct Aspect {
  const char *name;
  const char *dialect;
  const char *directory;
  const char *extension;
  CoversFn covers;
};

/// True if `c` may appear inside an op name (`nn.reduce_sum`).
bool isOpNameChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$';
}

/// True if `line` contains `opName` as a whole name: "nn.param" is not found
/// in "nn.parameter", nor "nn.log" in "nn.log_softmax".
bool mentionsOp(StringRef line, StringRef opName) {
  for (size_t pos = line.find(opName); pos != StringRef::npos;
       pos = line.find(opName, pos + 1)) {
    size_t end = pos + opName.size();
    bool startOk = pos == 0 || !isOpNameChar(line[pos - 1]);
    bool endOk = end == line.size() || !isOpNameChar(line[end]);
    if (startOk && endOk)
      return true;
  }
  return false;
}

/// The text after a positive FileCheck directive of the default prefix
/// (`CHECK:`, `CHECK-NEXT:`, `CHECK-SAME:`, `CHECK-LABEL:`, `CHECK-DAG:`) in
/// a comment line, or std::nullopt. `CHECK-NOT:` asserts absence and does not
/// count.
std::optional<StringRef> checkPattern(StringRef line) {
  StringRef trimmed = line.ltrim();
  if (!trimmed.consume_front("//"))
    return std::nullopt;
  trimmed = trimmed.ltrim();
  if (!trimmed.consume_front("CHECK"))
    return std::nullopt;
  for (StringRef suffix : {"-NEXT", "-SAME", "-LABEL", "-DAG"})
    if (trimmed.consume_front(suffix))
      break;
  if (!trimmed.consume_front(":"))
    return std::nullopt;
  return trimmed;
}

/// The round-trip rule: some FileCheck line of the file names the op, so the
/// test fails if the op stops printing or parsing as expected.
bool hasCheckLineMentioning(StringRef text, StringRef opName) {
  llvm::SmallVector<StringRef> lines;
  text.split(lines, '\n');
  return llvm::any_of(lines, [&](StringRef line) {
    std::optional<StringRef> pattern = checkPattern(line);
    return pattern && mentionsOp(*pattern, opName);
  });
}

/// Every aspect every op must have, per dialect. Later issues add rows here,
/// e.g.
///   {"evaluator", "test/Tools/tandem-eval/nn", ".mlir",
///   hasCheckLineMentioning},
///   {"gradient", "test/Dialect/NN/autodiff", ".mlir", hasCheckLineMentioning},
///   {"emitter", "test/Target/Cpp/nn", ".mlir", hasCheckLineMentioning},
const Aspect kAspects[] = {
    {"round-trip", "nn", "test/Dialect/NN/roundtrip", ".mlir",
     hasCheckLineMentioning},
    {"mpmd-round-trip", "mpmd", "test/Dialect/MPMD", ".mlir",
     hasCheckLineMentioning},
};

/// The ops of `ops` that no file of `files` covers under `covers`, in the
/// order of `ops`.
std::vector<std::string> findUncovered(llvm::ArrayRef<std::string> ops,
                                       llvm::ArrayRef<TestFile> files,
                                       CoversFn covers) {
  std::vector<std::string> uncovered;
  for (const std::string &op : ops)
    if (llvm::none_of(
            files, [&](const TestFile &file) { return covers(file.text, op); }))
      uncovered.push_back(op);
  return uncovered;
}

/// Reads every file under `directory` (recursively) whose name ends in
/// `extension`, sorted by path.
llvm::Expected<std::vector<TestFile>> loadTestFiles(StringRef directory,
                                                    StringRef extension) {
  if (!llvm::sys::fs::is_directory(directory))
    return llvm::createStringError("no test directory '" + directory + "'");
  std::vector<TestFile> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(directory, ec), end;
       it != end && !ec; it.increment(ec)) {
    StringRef path = it->path();
    if (!path.ends_with(extension) || llvm::sys::fs::is_directory(path))
      continue;
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return llvm::createStringError("cannot read '" + path +
                                     "': " + buffer.getError().message());
    files.push_back({path.str(), (*buffer)->getBuffer().str()});
  }
  if (ec)
    return llvm::createStringError("cannot list '" + directory +
                                   "': " + ec.message());
  llvm::sort(files, [](const TestFile &a, const TestFile &b) {
    return a.path < b.path;
  });
  return files;
}

/// The names of the ops `dialect` registers ("nn.add", ...), sorted.
std::vector<std::string> registeredOps(StringRef dialect) {
  mlir::DialectRegistry registry;
  tandem::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.getOrLoadDialect(dialect);
  std::vector<std::string> ops;
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations())
    if (op.getDialectNamespace() == dialect)
      ops.push_back(op.getStringRef().str());
  llvm::sort(ops);
  return ops;
}

/// The names of the ops the nn dialect registers, sorted.
std::vector<std::string> registeredNNOps() { return registeredOps("nn"); }

/// The failure message for `uncovered` ops of `aspect`.
std::string describeUncovered(const Aspect &aspect, StringRef directory,
                              llvm::ArrayRef<std::string> uncovered) {
  std::string message;
  llvm::raw_string_ostream os(message);
  os << uncovered.size() << " " << aspect.dialect << " op(s) lack "
     << aspect.name << " coverage (no file under " << directory
     << " covers them; add a test there):";
  for (const std::string &op : uncovered)
    os << "\n  " << op;
  return message;
}

//===----------------------------------------------------------------------===//
// Every registered nn op, for every aspect
//===----------------------------------------------------------------------===//

/// Names the aspect in test listings instead of dumping its bytes.
void PrintTo(const Aspect &aspect, std::ostream *os) { *os << aspect.name; }

class OpCoverage : public ::testing::TestWithParam<Aspect> {};

/// The least number of ops each dialect registers and one op it must have:
/// guards against the enumeration silently finding nothing (a dialect that
/// failed to load would make every aspect trivially pass).
struct DialectGuard {
  const char *dialect;
  size_t minOps;
  const char *someOp;
};
const DialectGuard kDialectGuards[] = {
    {"nn", 30, "nn.matmul"},
    {"mpmd", 10, "mpmd.fragment"},
};

TEST_P(OpCoverage, EveryOpIsCovered) {
  const Aspect &aspect = GetParam();
  std::vector<std::string> ops = registeredOps(aspect.dialect);
  const DialectGuard *guard =
      llvm::find_if(kDialectGuards, [&](const DialectGuard &g) {
        return StringRef(g.dialect) == aspect.dialect;
      });
  ASSERT_NE(guard, std::end(kDialectGuards))
      << "no guard for dialect '" << aspect.dialect << "'";
  ASSERT_GE(ops.size(), guard->minOps)
      << "expected the " << aspect.dialect << " dialect's ops, found "
      << ops.size();
  ASSERT_TRUE(llvm::is_contained(ops, guard->someOp));

  llvm::SmallString<256> directory(TANDEM_TEST_SOURCE_DIR);
  llvm::sys::path::append(directory, aspect.directory);
  auto files = loadTestFiles(directory, aspect.extension);
  ASSERT_TRUE(static_cast<bool>(files)) << llvm::toString(files.takeError());
  ASSERT_FALSE(files->empty()) << "no '" << aspect.extension << "' files under "
                               << std::string(directory);

  std::vector<std::string> uncovered =
      findUncovered(ops, *files, aspect.covers);
  EXPECT_TRUE(uncovered.empty())
      << describeUncovered(aspect, directory, uncovered);
}

/// The "evaluator" aspect: every registered nn op has a kernel in the
/// reference evaluator's registry. Its evidence is the registry's exported
/// op list rather than test files, so it is checked here instead of through
/// `kAspects`; findUncovered does the matching, with the list as one file.
TEST(OpCoverageEvaluator, EveryNNOpHasAKernel) {
  std::vector<std::string> ops = registeredNNOps();
  ASSERT_GE(ops.size(), 30u);
  std::string list;
  for (const std::string &op : tandem::eval::supportedOps())
    list += op + "\n";
  std::vector<TestFile> files = {{"<evaluator kernel registry>", list}};
  auto listsOp = [](StringRef text, StringRef opName) {
    llvm::SmallVector<StringRef> lines;
    text.split(lines, '\n');
    return llvm::is_contained(lines, opName);
  };
  std::vector<std::string> uncovered = findUncovered(ops, files, listsOp);
  Aspect evaluator = {"evaluator", "nn", "lib/Eval", ".cpp", listsOp};
  EXPECT_TRUE(uncovered.empty()) << describeUncovered(
      evaluator, "the evaluator's kernel registry", uncovered);
  // The matching can fail: a list without nn.softmax leaves it uncovered.
  std::string withoutSoftmax;
  for (const std::string &op : tandem::eval::supportedOps())
    if (op != "nn.softmax")
      withoutSoftmax += op + "\n";
  std::vector<TestFile> partial = {{"partial", withoutSoftmax}};
  EXPECT_EQ(findUncovered(ops, partial, listsOp),
            std::vector<std::string>{"nn.softmax"});
}

/// The "gradient" aspect: every registered nn op has a gradient rule in
/// nn-autodiff or is listed as deliberately non-differentiable, with a
/// reason. The finite-difference cases (AutodiffTest.cpp) check that every
/// rule is exercised.
TEST(OpCoverageGradient, EveryNNOpHasAGradientRule) {
  std::vector<std::string> ops = registeredNNOps();
  ASSERT_GE(ops.size(), 30u);
  std::string list;
  for (const std::string &op : tandem::nn::opsWithGradientRules())
    list += op + "\n";
  for (const auto &[op, reason] : tandem::nn::nonDifferentiableOps()) {
    EXPECT_FALSE(reason.empty()) << op << " is listed without a reason";
    EXPECT_FALSE(llvm::is_contained(tandem::nn::opsWithGradientRules(), op))
        << op << " has a rule and is listed as non-differentiable";
    list += op + "\n";
  }
  std::vector<TestFile> files = {{"<gradient rules>", list}};
  auto listsOp = [](StringRef text, StringRef opName) {
    llvm::SmallVector<StringRef> lines;
    text.split(lines, '\n');
    return llvm::is_contained(lines, opName);
  };
  std::vector<std::string> uncovered = findUncovered(ops, files, listsOp);
  Aspect gradient = {"gradient", "nn", "lib/Dialect/NN/Transforms", ".cpp",
                     listsOp};
  EXPECT_TRUE(uncovered.empty())
      << describeUncovered(gradient, "nn-autodiff's gradient rules", uncovered);
  EXPECT_TRUE(
      llvm::is_contained(tandem::nn::opsWithGradientRules(), "nn.matmul"));
}

/// The "cost" aspect: every registered nn op has a rule in the cost model
/// (lib/Analysis/CostModel.cpp), so mpmd-simulate's device= timing never
/// meets an nn op it cannot price.
TEST(OpCoverageCost, EveryNNOpHasACostRule) {
  std::vector<std::string> ops = registeredNNOps();
  ASSERT_GE(ops.size(), 30u);
  std::string list;
  for (const std::string &op : tandem::analysis::opsWithCostRules())
    list += op + "\n";
  std::vector<TestFile> files = {{"<cost rules>", list}};
  auto listsOp = [](StringRef text, StringRef opName) {
    llvm::SmallVector<StringRef> lines;
    text.split(lines, '\n');
    return llvm::is_contained(lines, opName);
  };
  std::vector<std::string> uncovered = findUncovered(ops, files, listsOp);
  Aspect cost = {"cost", "nn", "lib/Analysis", ".cpp", listsOp};
  EXPECT_TRUE(uncovered.empty())
      << describeUncovered(cost, "the cost model's rules", uncovered);
  // Rules only for ops that exist: a renamed op leaves no stale rule.
  for (const std::string &op : tandem::analysis::opsWithCostRules())
    EXPECT_TRUE(llvm::is_contained(ops, op)) << op << " has a cost rule but "
                                             << "is not a registered nn op";
}

/// The "emitter" aspect: every registered nn op is written out by the CPU
/// emitter or listed as handled elsewhere with what to do instead (e.g.
/// nn.attention: decompose first). The numeric cases in
/// unittests/Target/CPU/OpEmitterTest.cpp run every op the emitter claims
/// against the evaluator, so a claim without code fails there.
TEST(OpCoverageEmitter, EveryNNOpIsEmitted) {
  std::vector<std::string> ops = registeredNNOps();
  ASSERT_GE(ops.size(), 30u);
  std::string list;
  for (const std::string &op : tandem::cpu::supportedOps())
    list += op + "\n";
  for (const auto &[op, instead] : tandem::cpu::opsHandledElsewhere()) {
    EXPECT_FALSE(instead.empty()) << op << " is listed without what to do";
    EXPECT_FALSE(llvm::is_contained(tandem::cpu::supportedOps(), op))
        << op << " is both emitted and handled elsewhere";
    list += op + "\n";
  }
  std::vector<TestFile> files = {{"<CPU emitter ops>", list}};
  auto listsOp = [](StringRef text, StringRef opName) {
    llvm::SmallVector<StringRef> lines;
    text.split(lines, '\n');
    return llvm::is_contained(lines, opName);
  };
  std::vector<std::string> uncovered = findUncovered(ops, files, listsOp);
  Aspect emitter = {"emitter", "nn", "lib/Target/CPU", ".cpp", listsOp};
  EXPECT_TRUE(uncovered.empty())
      << describeUncovered(emitter, "the CPU emitter's op list", uncovered);
  // Claims only for ops that exist: a renamed op leaves no stale entry.
  for (const std::string &op : tandem::cpu::supportedOps())
    EXPECT_TRUE(llvm::is_contained(ops, op))
        << op << " is emitted but is not a registered nn op";
}

/// The CUDA emitter: every registered nn op is lowered or listed as not
/// lowered yet with the kernel that will; never both, and no stale names.
/// unittests/Target/CUDA/EmulationTest.cpp runs every lowered elementwise
/// op and the codecs against the evaluator.
TEST(OpCoverageEmitter, EveryNNOpIsLoweredByCudaOrListed) {
  std::vector<std::string> ops = registeredNNOps();
  std::vector<std::string> lowered = tandem::cuda::supportedOps();
  for (const std::string &op : ops) {
    bool notYet =
        llvm::any_of(tandem::cuda::opsNotLoweredYet(),
                     [&](const auto &row) { return row.first == op; });
    EXPECT_NE(llvm::is_contained(lowered, op), notYet)
        << op << ": the CUDA emitter must lower it or list it in "
        << "opsNotLoweredYet(), not both";
  }
  for (const std::string &op : lowered)
    EXPECT_TRUE(llvm::is_contained(ops, op)) << op << " is not an nn op";
  // The blockwise codecs have kernels (unittests/Target/CUDA/
  // EmulationTest.cpp's CodecEmulationTest runs them against the
  // evaluator): compressed stage edges run on the CUDA target.
  for (const char *op : {"nn.quantize", "nn.dequantize"})
    EXPECT_TRUE(llvm::is_contained(lowered, op))
        << op << " must be lowered by the CUDA emitter";
  for (const auto &[op, kernel] : tandem::cuda::opsNotLoweredYet()) {
    EXPECT_TRUE(llvm::is_contained(ops, op)) << op << " is not an nn op";
    EXPECT_FALSE(kernel.empty()) << op << " is listed without its kernel";
  }
}

INSTANTIATE_TEST_SUITE_P(Aspects, OpCoverage, ::testing::ValuesIn(kAspects),
                         [](const ::testing::TestParamInfo<Aspect> &info) {
                           std::string name = info.param.name;
                           for (char &c : name)
                             if (!llvm::isAlnum(c))
                               c = '_';
                           return name;
                         });

//===----------------------------------------------------------------------===//
// The checker itself: it must be able to fail
//===----------------------------------------------------------------------===//

/// A round-trip test checking `op` (a line of input IR and its CHECK line).
std::string roundTripCase(StringRef op) {
  return ("// CHECK: %{{.*}} = " + op + " %{{.*}} : tensor<4xf32>\n" +
          "%0 = " + op + " %x : tensor<4xf32>\n")
      .str();
}

TEST(OpCoverageChecker, ReportsTheOpMissingFromInMemoryFiles) {
  std::vector<std::string> ops = registeredNNOps();
  const std::string missing = "nn.softmax";
  ASSERT_TRUE(llvm::is_contained(ops, missing));

  // Two files that together check every op but one.
  std::vector<TestFile> files(2);
  files[0].path = "a.mlir";
  files[1].path = "b.mlir";
  for (auto [i, op] : llvm::enumerate(ops))
    if (op != missing)
      files[i % 2].text += roundTripCase(op);

  EXPECT_EQ(findUncovered(ops, files, hasCheckLineMentioning),
            std::vector<std::string>{missing});

  // Mentioning the op without checking it does not count either.
  files[0].text += "%1 = " + missing + " %x {axis = 0 : i64} : tensor<4xf32>\n";
  files[0].text += "// CHECK-NOT: " + missing + "\n";
  files[0].text += "// " + missing + " is not tested here\n";
  EXPECT_EQ(findUncovered(ops, files, hasCheckLineMentioning),
            std::vector<std::string>{missing});

  files[1].text += "// CHECK-SAME: " + missing + "\n";
  EXPECT_TRUE(findUncovered(ops, files, hasCheckLineMentioning).empty());
}

TEST(OpCoverageChecker, MatchesWholeOpNamesOnly) {
  // Ops whose names are prefixes of other ops' names.
  std::vector<std::string> ops = {"nn.param", "nn.log", "nn.reduce_max",
                                  "nn.parameter", "nn.log_softmax"};
  std::vector<TestFile> files = {
      {"prefixes.mlir", "// CHECK-LABEL: nn.parameter @w : tensor<4xf32>\n"
                        "// CHECK: nn.log_softmax %x {axis = 0 : i64}\n"
                        "// CHECK-DAG: \"nn.reduce_max\"(%x)\n"}};
  EXPECT_EQ(findUncovered(ops, files, hasCheckLineMentioning),
            (std::vector<std::string>{"nn.param", "nn.log"}));
}

TEST(OpCoverageChecker, ReportsTheOpMissingFromADirectory) {
  std::vector<std::string> ops = registeredNNOps();
  const std::string missing = "nn.stage_end";
  ASSERT_TRUE(llvm::is_contained(ops, missing));

  llvm::SmallString<128> directory;
  ASSERT_FALSE(
      llvm::sys::fs::createUniqueDirectory("op-coverage-test", directory));
  llvm::SmallString<128> nested(directory);
  llvm::sys::path::append(nested, "nested");
  ASSERT_FALSE(llvm::sys::fs::create_directory(nested));

  // Every op but one, split between a top-level and a nested file; a file
  // with another extension that checks the missing op must be ignored.
  auto write = [](StringRef dir, StringRef name, StringRef text) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec) << ec.message();
    os << text;
  };
  std::string top, inner;
  for (auto [i, op] : llvm::enumerate(ops))
    if (op != missing)
      (i % 2 ? top : inner) += roundTripCase(op);
  write(directory, "top.mlir", top);
  write(nested, "inner.mlir", inner);
  write(directory, "notes.txt", roundTripCase(missing));

  Aspect fake = {"fake", "nn", "unused", ".mlir", hasCheckLineMentioning};
  auto files = loadTestFiles(directory, fake.extension);
  ASSERT_TRUE(static_cast<bool>(files)) << llvm::toString(files.takeError());
  EXPECT_EQ(files->size(), 2u);
  std::vector<std::string> uncovered = findUncovered(ops, *files, fake.covers);
  EXPECT_EQ(uncovered, std::vector<std::string>{missing});
  std::string message = describeUncovered(fake, directory, uncovered);
  EXPECT_NE(message.find("1 nn op(s) lack fake coverage"), std::string::npos)
      << message;
  EXPECT_NE(message.find("\n  nn.stage_end"), std::string::npos) << message;

  EXPECT_FALSE(llvm::sys::fs::remove_directories(directory));

  // A directory that does not exist is an error, not an empty (and so
  // trivially complete) file set.
  auto none = loadTestFiles(directory, ".mlir");
  EXPECT_FALSE(static_cast<bool>(none));
  llvm::consumeError(none.takeError());
}

} // namespace
