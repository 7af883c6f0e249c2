//===- LinalgKernels.cpp - matmul
//------------------------------------------===//
//
// Each output element is the sum over k = 0, 1, ..., K-1 of lhs·rhs products,
// accumulated in double in increasing k: a fixed order that backends can be
// compared against.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tandem/Dialect/NN/IR/NNOps.h"

using namespace tandem::eval;
namespace nn = tandem::nn;

namespace {

KernelResult matmulKernel(const KernelCall &call) {
  auto op = llvm::cast<nn::MatmulOp>(call.op);
  const Tensor &lhs = *call.operands[0], &rhs = *call.operands[1];
  bool transLhs = op.getTransposeLhs(), transRhs = op.getTransposeRhs();
  int64_t lr = lhs.rank(), rr = rhs.rank();
  if (lr < 2 || rr < 2)
    return opError(call.op, "operands must have rank >= 2");
  int64_t m = transLhs ? lhs.shape[lr - 1] : lhs.shape[lr - 2];
  int64_t k = transLhs ? lhs.shape[lr - 2] : lhs.shape[lr - 1];
  int64_t rhsK = transRhs ? rhs.shape[rr - 1] : rhs.shape[rr - 2];
  int64_t n = transRhs ? rhs.shape[rr - 2] : rhs.shape[rr - 1];
  if (k != rhsK)
    return opError(call.op, "contraction sizes differ: " + llvm::Twine(k) +
                                " vs " + llvm::Twine(rhsK));
  int64_t batches = numElementsOf(llvm::ArrayRef(lhs.shape).drop_back(2));
  // A 2-D rhs is shared by every batch of lhs.
  bool sharedRhs = rr == 2;
  if (!sharedRhs &&
      numElementsOf(llvm::ArrayRef(rhs.shape).drop_back(2)) != batches)
    return opError(call.op, "batch dimensions differ");

  Tensor result = resultTensor(call.op);
  if (result.numElements() != batches * m * n)
    return opError(call.op, "result type does not match the operands");
  // Element (i, j) of a possibly transposed rows×cols matrix stored at base.
  auto lhsAt = [&](int64_t b, int64_t i, int64_t j) {
    return lhs.data[b * m * k + (transLhs ? j * m + i : i * k + j)];
  };
  auto rhsAt = [&](int64_t b, int64_t i, int64_t j) {
    int64_t base = sharedRhs ? 0 : b * k * n;
    return rhs.data[base + (transRhs ? j * k + i : i * n + j)];
  };
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p)
          sum += lhsAt(b, i, p) * rhsAt(b, p, j);
        result.data[(b * m + i) * n + j] = sum;
      }
  return single(std::move(result));
}

} // namespace

void tandem::eval::registerLinalgKernels(KernelRegistry &registry) {
  registry.add(nn::MatmulOp::getOperationName(), matmulKernel);
}
