//===- EmitterTestUtils.cpp - run emitted code next to the evaluator ------===//

#include "EmitterTestUtils.h"

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Eval/Rounding.h"
#include "tandem/InitAll.h"
#include "tandem/Runtime/FragmentABI.h"
#include "tandem/Target/CPU/Compiler.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>

using namespace tandem::cpu::testing;
using tandem::eval::Tensor;

namespace {

/// Collects diagnostics into a string while alive.
struct DiagnosticCollector {
  explicit DiagnosticCollector(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &diag) {
          llvm::raw_string_ostream os(text);
          os << diag.getLocation() << ": " << diag << "\n";
          return mlir::success();
        }) {}
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

using EntryPoint = tandem_fragment_fn;
/// What the host runtime passes (fragment ABI v2).
const tandem_fragment_context kHostContext = {
    TANDEM_FRAGMENT_ABI_VERSION, 0, nullptr, nullptr, nullptr, 0, nullptr};
using ScratchBytes = uint64_t (*)();

size_t elementBytes(mlir::Type type) {
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

const llvm::fltSemantics &halfSemantics(mlir::Type type) {
  return type.isBF16() ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf();
}

/// The bf16/f16 bit pattern of `x` (already a value of the type).
uint16_t halfBits(double x, mlir::Type type) {
  llvm::APFloat value(x);
  bool losesInfo = false;
  value.convert(halfSemantics(type), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
}

double halfValue(uint16_t bits, mlir::Type type) {
  llvm::APFloat value(halfSemantics(type), llvm::APInt(16, bits));
  bool losesInfo = false;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToDouble();
}

} // namespace

std::unique_ptr<mlir::MLIRContext> tandem::cpu::testing::makeContext() {
  mlir::DialectRegistry registry;
  tandem::registerAllDialects(registry);
  tandem::registerAllPasses();
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
tandem::cpu::testing::parseModule(mlir::MLIRContext &context,
                                  llvm::StringRef text) {
  DiagnosticCollector diagnostics(context);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return llvm::createStringError("parse failed:\n" + diagnostics.text);
  return module;
}

llvm::Error tandem::cpu::testing::runPipeline(mlir::ModuleOp module,
                                              llvm::StringRef pipeline) {
  DiagnosticCollector diagnostics(*module.getContext());
  mlir::PassManager pm(module.getContext());
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, errorStream)))
    return llvm::createStringError("bad pipeline: " + error);
  if (mlir::failed(pm.run(module)))
    return llvm::createStringError("'" + pipeline + "' failed:\n" +
                                   diagnostics.text);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Library>>
Library::open(const std::string &path) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return llvm::createStringError(std::string("dlopen: ") + dlerror());
  return std::unique_ptr<Library>(new Library(handle));
}

Library::~Library() { dlclose(handle); }

void *Library::lookup(const std::string &symbol) const {
  return dlsym(handle, symbol.c_str());
}

const tandem::cpu::EmittedFunction *Compiled::find(llvm::StringRef name) const {
  for (const EmittedFunction &function : emitted.functions)
    if (function.name == name)
      return &function;
  return nullptr;
}

llvm::Expected<Compiled> tandem::cpu::testing::emitAndCompile(
    llvm::ArrayRef<mlir::Operation *> functions, const EmitOptions &options,
    const CompileOptions &compile) {
  if (functions.empty())
    return llvm::createStringError("nothing to emit");
  DiagnosticCollector diagnostics(*functions.front()->getContext());
  mlir::FailureOr<EmitResult> emitted = emitCpp(functions, options);
  if (mlir::failed(emitted))
    return llvm::createStringError("emission failed:\n" + diagnostics.text);
  llvm::Expected<CompiledLibrary> library =
      compileSource(emitted->source, compile);
  if (!library)
    return library.takeError();
  llvm::Expected<std::unique_ptr<Library>> loaded =
      Library::open(library->path);
  if (!loaded)
    return loaded.takeError();
  Compiled compiled;
  compiled.emitted = std::move(*emitted);
  compiled.library = std::move(*loaded);
  return compiled;
}

llvm::Expected<std::vector<Tensor>>
tandem::cpu::testing::runCompiled(const Compiled &compiled,
                                  const EmittedFunction &function,
                                  llvm::ArrayRef<Tensor> inputs) {
  auto entry =
      reinterpret_cast<EntryPoint>(compiled.library->lookup(function.symbol));
  auto scratchBytes = reinterpret_cast<ScratchBytes>(
      compiled.library->lookup(function.symbol + "_scratch_bytes"));
  if (!entry || !scratchBytes)
    return llvm::createStringError("no symbol '" + function.symbol + "'");
  if (scratchBytes() != function.scratchBytes)
    return llvm::createStringError("scratch size differs from the report");
  // Storage in the ABI's element types; doubles hold every value exactly.
  std::vector<std::vector<char>> inputBytes;
  std::vector<const void *> args;
  for (const Tensor &input : inputs) {
    std::vector<char> bytes(input.data.size() *
                            elementBytes(input.elementType));
    for (size_t i = 0; i < input.data.size(); ++i) {
      double x = input.data[i];
      mlir::Type type = input.elementType;
      if (type.isF32()) {
        float v = static_cast<float>(x);
        std::memcpy(&bytes[i * 4], &v, 4);
      } else if (type.isF64()) {
        std::memcpy(&bytes[i * 8], &x, 8);
      } else if (type.isInteger(32)) {
        int32_t v = static_cast<int32_t>(x);
        std::memcpy(&bytes[i * 4], &v, 4);
      } else if (type.isInteger(64)) {
        int64_t v = static_cast<int64_t>(x);
        std::memcpy(&bytes[i * 8], &v, 8);
      } else if (type.isBF16() || type.isF16()) {
        uint16_t v = halfBits(x, type);
        std::memcpy(&bytes[i * 2], &v, 2);
      } else {
        return llvm::createStringError("unsupported input type");
      }
    }
    inputBytes.push_back(std::move(bytes));
  }
  for (auto &bytes : inputBytes)
    args.push_back(bytes.data());
  std::vector<Tensor> results;
  std::vector<std::vector<char>> resultBytes;
  std::vector<void *> resultPointers;
  for (mlir::RankedTensorType type : function.resultTypes) {
    results.emplace_back(type);
    // Poisoned, so a result the code forgets to write shows up.
    resultBytes.emplace_back(
        type.getNumElements() * elementBytes(type.getElementType()), '\x7f');
  }
  for (auto &bytes : resultBytes)
    resultPointers.push_back(bytes.data());
  void *scratch =
      std::aligned_alloc(64, (function.scratchBytes + 63) / 64 * 64 + 64);
  int status =
      entry(&kHostContext, args.data(), resultPointers.data(), scratch);
  std::free(scratch);
  if (status != 0)
    return llvm::createStringError("entry point returned " +
                                   std::to_string(status));
  for (auto [result, bytes] : llvm::zip(results, resultBytes)) {
    mlir::Type type = result.elementType;
    for (size_t i = 0; i < result.data.size(); ++i) {
      if (type.isF32()) {
        float v;
        std::memcpy(&v, &bytes[i * 4], 4);
        result.data[i] = v;
      } else if (type.isF64()) {
        std::memcpy(&result.data[i], &bytes[i * 8], 8);
      } else if (type.isInteger(32)) {
        int32_t v;
        std::memcpy(&v, &bytes[i * 4], 4);
        result.data[i] = v;
      } else if (type.isBF16() || type.isF16()) {
        uint16_t v;
        std::memcpy(&v, &bytes[i * 2], 2);
        result.data[i] = halfValue(v, type);
      } else {
        int64_t v;
        std::memcpy(&v, &bytes[i * 8], 8);
        result.data[i] = static_cast<double>(v);
      }
    }
  }
  return results;
}

Tensor tandem::cpu::testing::randomTensor(mlir::RankedTensorType type,
                                          std::mt19937 &rng,
                                          const InputRange &range) {
  Tensor tensor(type);
  if (llvm::isa<mlir::IntegerType>(type.getElementType())) {
    std::uniform_int_distribution<int64_t> dist(0, range.intBound - 1);
    for (double &x : tensor.data)
      x = static_cast<double>(dist(rng));
    return tensor;
  }
  std::uniform_real_distribution<double> dist(range.low, range.high);
  for (double &x : tensor.data)
    x = dist(rng);
  eval::roundAllToType(tensor.data.data(), tensor.data.size(),
                       type.getElementType(), {});
  return tensor;
}

double tandem::cpu::testing::nativeErrorBound(mlir::Block &body) {
  // λ = 3 and u = 2^-24, as tolerance.LAMBDA and tolerance.U32.
  constexpr double kLambda = 3.0, kUnitRoundoff = 0x1p-24;
  llvm::DenseMap<mlir::Value, double> error;
  double worst = 0.0;
  for (mlir::Operation &op : body) {
    double inherited = 0.0;
    for (mlir::Value operand : op.getOperands())
      inherited = std::max(inherited, error.lookup(operand));
    if (auto matmul = llvm::dyn_cast<tandem::nn::MatmulOp>(op)) {
      auto lhs = llvm::cast<mlir::RankedTensorType>(matmul.getLhs().getType());
      int64_t rank = lhs.getRank();
      int64_t k =
          lhs.getDimSize(matmul.getTransposeLhs() ? rank - 2 : rank - 1);
      inherited +=
          kLambda * std::sqrt(static_cast<double>(k + 1)) * kUnitRoundoff;
    }
    if (op.hasTrait<mlir::OpTrait::IsTerminator>())
      worst = std::max(worst, inherited);
    for (mlir::Value result : op.getResults())
      error[result] = inherited;
  }
  return worst;
}

double tandem::cpu::testing::relativeError(const Tensor &a, const Tensor &b) {
  if (a.shape != b.shape || a.data.size() != b.data.size())
    return std::numeric_limits<double>::infinity();
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    bool nanA = std::isnan(a.data[i]), nanB = std::isnan(b.data[i]);
    if (nanA != nanB)
      return std::numeric_limits<double>::infinity();
    if (nanA)
      continue;
    double d = a.data[i] - b.data[i];
    diff += d * d;
    norm += b.data[i] * b.data[i];
  }
  return norm == 0.0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

llvm::Expected<std::vector<double>> tandem::cpu::testing::compareWithEvaluator(
    mlir::ModuleOp module, const Compiled &compiled, llvm::StringRef name,
    const eval::ParameterMap &parameters, std::mt19937 &rng,
    const InputRange &range) {
  const EmittedFunction *function = compiled.find(name);
  if (!function)
    return llvm::createStringError("'" + name + "' was not emitted");
  std::vector<Tensor> arguments, inputs;
  for (mlir::RankedTensorType type : function->argumentTypes)
    arguments.push_back(randomTensor(type, rng, range));
  inputs = arguments;
  for (const auto &[param, type] : function->parameters) {
    auto it = parameters.find(param);
    if (it == parameters.end())
      return llvm::createStringError("no value for parameter '" + param + "'");
    inputs.push_back(it->second);
  }
  eval::Interpreter interpreter(module);
  interpreter.setParameters(parameters);
  llvm::Expected<std::vector<Tensor>> expected =
      interpreter.run(name, arguments);
  if (!expected)
    return expected.takeError();
  llvm::Expected<std::vector<Tensor>> actual =
      runCompiled(compiled, *function, inputs);
  if (!actual)
    return actual.takeError();
  if (actual->size() != expected->size())
    return llvm::createStringError("result counts differ");
  std::vector<double> errors;
  for (auto [a, b] : llvm::zip(*actual, *expected))
    errors.push_back(relativeError(a, b));
  return errors;
}

llvm::Expected<unsigned> tandem::cpu::testing::countDifferingResults(
    const Compiled &a, const Compiled &b, llvm::StringRef name,
    const eval::ParameterMap &parameters, std::mt19937 &rng,
    const InputRange &range) {
  const EmittedFunction *first = a.find(name), *second = b.find(name);
  if (!first || !second)
    return llvm::createStringError("'" + name + "' was not emitted");
  std::vector<Tensor> inputs;
  for (mlir::RankedTensorType type : first->argumentTypes)
    inputs.push_back(randomTensor(type, rng, range));
  for (const auto &[param, type] : first->parameters) {
    auto it = parameters.find(param);
    if (it == parameters.end())
      return llvm::createStringError("no value for parameter '" + param + "'");
    inputs.push_back(it->second);
  }
  llvm::Expected<std::vector<Tensor>> x = runCompiled(a, *first, inputs);
  if (!x)
    return x.takeError();
  llvm::Expected<std::vector<Tensor>> y = runCompiled(b, *second, inputs);
  if (!y)
    return y.takeError();
  if (x->size() != y->size())
    return llvm::createStringError("result counts differ");
  unsigned differing = 0;
  for (auto [p, q] : llvm::zip(*x, *y)) {
    // Bitwise: NaNs compare by their bits too, so memcmp, not ==.
    bool same = p.data.size() == q.data.size() &&
                std::memcmp(p.data.data(), q.data.data(),
                            p.data.size() * sizeof(double)) == 0;
    differing += same ? 0 : 1;
  }
  return differing;
}
