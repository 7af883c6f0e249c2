//===- Compiler.cpp - compiling emitted C++ into a shared library ---------===//

#include "tandem/Target/CPU/Compiler.h"

#include "tandem/Lowering/CompileCache.h"
#include "tandem/Runtime/CpuFeatures.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <optional>

using namespace tandem::cpu;

std::vector<std::string> tandem::cpu::defaultCompileFlags() {
  // -ffp-contract=off: a fused multiply-add would round differently from
  // the evaluator and make results depend on how ops were fused.
  // -z nodelete: dlclose must not unload the library, and with it libgomp,
  // while OpenMP's worker threads from a parallel loop still run its code.
  // -O3: the vectorizer (GCC's -O2 model leaves most generated loops
  // scalar). After -fno-fast-math, which would reset them: -fno-math-errno
  // (sqrt is an instruction, not a call that may set errno) and
  // -fno-trapping-math (selects between computed values are if-converted,
  // so loops calling tandem_math::exp vectorize). Neither changes a value:
  // nothing reads errno or the floating-point exception flags.
  return {"-std=c++17",      "-O3",
          "-fPIC",           "-shared",
          "-fno-fast-math",  "-ffp-contract=off",
          "-fno-math-errno", "-fno-trapping-math",
          "-fopenmp",        "-Wl,-z,nodelete"};
}

std::string tandem::cpu::resolveArch(llvm::StringRef arch) {
  if (!arch.empty())
    return arch.str();
  return llvm::sys::Process::GetEnv("TANDEM_CPU_ARCH").value_or("native");
}

std::vector<std::string> tandem::cpu::archFeatures(llvm::StringRef arch) {
  llvm::StringSet<> enabled;
  if (arch == "native") {
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      if (feature.second)
        enabled.insert(feature.first());
  } else if (llvm::X86::parseArchX86(arch) != llvm::X86::CK_None) {
    llvm::SmallVector<llvm::StringRef> features;
    llvm::X86::getFeaturesForCPU(arch, features);
    for (llvm::StringRef feature : features)
      enabled.insert(feature);
  }
  std::vector<std::string> known;
  for (const std::string &name : tandem::runtime::knownCpuFeatures())
    if (enabled.contains(name))
      known.push_back(name);
  return known;
}

llvm::Expected<CompiledLibrary>
tandem::cpu::compileSource(llvm::StringRef source,
                           const CompileOptions &options) {
  std::string compiler = options.compiler;
  if (compiler.empty())
    compiler = llvm::sys::Process::GetEnv("TANDEM_CXX").value_or("c++");
  std::string cacheDir = options.cacheDir.empty()
                             ? tandem::lowering::defaultCacheDir(
                                   "TANDEM_CPU_CACHE", "tandem-cpu-cache")
                             : options.cacheDir;

  std::string arch = resolveArch(options.arch);
  if (arch.empty() || arch.front() == '-' ||
      arch.find_first_of(" \t\n") != std::string::npos)
    return llvm::createStringError("invalid CPU architecture '" + arch +
                                   "' (--cpu-arch or TANDEM_CPU_ARCH: a "
                                   "-march= value such as native or "
                                   "x86-64-v3)");
  std::vector<std::string> flags = defaultCompileFlags();
  flags.push_back("-march=" + arch);
  flags.insert(flags.end(), options.extraFlags.begin(),
               options.extraFlags.end());
  // The key covers everything that changes the library; for -march=native
  // that includes the CPU the compiler runs on (a cache shared between
  // machines must not hand one CPU's library to another).
  std::vector<std::string> key = {source.str(), compiler};
  key.insert(key.end(), flags.begin(), flags.end());
  if (arch == "native") {
    key.push_back(llvm::sys::getHostCPUName().str());
    std::vector<std::string> features;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      if (feature.second)
        features.push_back(feature.first().str());
    llvm::sort(features);
    key.insert(key.end(), features.begin(), features.end());
  }

  llvm::Expected<tandem::lowering::CompiledLibrary> library =
      tandem::lowering::buildCached(
          cacheDir, key, ".so",
          [&](tandem::lowering::CacheBuild &build) -> llvm::Error {
            // Resolved only when it must run, so a cache hit needs none.
            llvm::Expected<std::string> program = tandem::lowering::findTool(
                compiler, "C++ compiler", "TANDEM_CXX");
            if (!program)
              return program.takeError();
            llvm::Expected<std::string> sourceFile = build.temporary(".cpp");
            if (!sourceFile)
              return sourceFile.takeError();
            if (llvm::Error error =
                    tandem::lowering::writeTextFile(*sourceFile, source))
              return error;
            std::vector<std::string> args = {*program};
            args.insert(args.end(), flags.begin(), flags.end());
            args.insert(args.end(),
                        {"-o", build.output(), *sourceFile, "-lopenblas"});
            return tandem::lowering::runCompiler(args, "C++", build);
          });
  if (!library)
    return library.takeError();
  return CompiledLibrary{library->path, library->cached};
}
