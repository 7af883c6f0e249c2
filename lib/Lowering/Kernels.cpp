//===- Kernels.cpp - kernels formed in IR before emission -----------------===//
//
// Greedy kernel formation in program order, the recorded form and its
// check (Kernels.h; docs/targets.md, "Kernels").
//
//===----------------------------------------------------------------------===//

#include "tandem/Lowering/Kernels.h"

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace tandem::lowering;
namespace nn = tandem::nn;
namespace mpmd = tandem::mpmd;

namespace {

constexpr llvm::StringLiteral kKernelAttr = "nn.kernel";
constexpr llvm::StringLiteral kGemmAttr = "nn.kernel_gemm";
constexpr llvm::StringLiteral kRowAttr = "nn.kernel_row";
constexpr llvm::StringLiteral kRowInputAttr = "nn.kernel_row_input";
constexpr llvm::StringLiteral kInPlaceAttr = "nn.in_place";
constexpr llvm::StringLiteral kAccumulatedAttr = "nn.accumulated";

bool isElementwise(Operation *op) {
  return op->hasTrait<nn::ElementwiseKernel>();
}
bool isReduction(Operation *op) { return op->hasTrait<nn::ReductionKernel>(); }

/// The value a row kernel fuses at (`op`'s first operand for a row input,
/// its first result for a row epilogue) when `op` is a row op (neither
/// elementwise nor a reduction) and that value is a ranked tensor; else
/// null.
Value rowOpValue(Operation *op, bool operand) {
  if (isElementwise(op) || isReduction(op) ||
      (operand ? op->getNumOperands() : op->getNumResults()) == 0)
    return Value();
  Value value = operand ? op->getOperand(0) : op->getResult(0);
  return isa<RankedTensorType>(value.getType()) ? value : Value();
}

llvm::ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

Block *bodyOf(Operation *function) {
  auto fn = dyn_cast<FunctionOpInterface>(function);
  if (!fn || fn.isExternal() || !llvm::hasSingleElement(fn.getFunctionBody()))
    return nullptr;
  return &fn.getFunctionBody().front();
}

/// Whether `op` (possibly null) is a member of kernel `index`.
bool inKernel(const llvm::DenseMap<Operation *, int> &kernelOf, Operation *op,
              int index) {
  auto it = op ? kernelOf.find(op) : kernelOf.end();
  return it != kernelOf.end() && it->second == index;
}

/// Where kernel `k` runs: inside its row op's kernel (a row epilogue), at
/// the row op whose rows it computes (a row input), else at its last
/// member.
Operation *runPoint(const Kernel &k) {
  return k.row ? k.row : k.rowInput ? k.rowInput : k.members.back();
}

/// Maps an op of the block to where its values exist and where it reads
/// its operands: a kernel member's kernel's run point, any other op itself.
using RunsAt = llvm::function_ref<Operation *(Operation *)>;

/// Whether kernel `index` (kernelOf maps members to kernels) reads,
/// besides its own values and `row`'s results, only values that exist
/// before `row`: a row epilogue runs inside the row op's kernel, at the op.
bool readsOnlyBefore(const Kernel &k, Operation *row, int index,
                     const llvm::DenseMap<Operation *, int> &kernelOf,
                     const llvm::DenseMap<Operation *, unsigned> &position,
                     RunsAt runsAt) {
  return llvm::all_of(k.members, [&](Operation *member) {
    return llvm::all_of(member->getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return !def || def == row || inKernel(kernelOf, def, index) ||
             position.lookup(runsAt(def)) < position.lookup(row);
    });
  });
}

/// Whether kernel `index` can run at `row`, computing its first operand:
/// only its last value is read outside it, by `row` and by ops (or the
/// kernels of ops) that read after it.
bool isRowInput(const Kernel &k, Operation *row, int index,
                const llvm::DenseMap<Operation *, int> &kernelOf,
                const llvm::DenseMap<Operation *, unsigned> &position,
                RunsAt runsAt) {
  Operation *last = k.members.back();
  return llvm::all_of(k.members, [&](Operation *member) {
    return llvm::all_of(member->getUsers(), [&](Operation *user) {
      if (inKernel(kernelOf, user, index))
        return true;
      Operation *at = row->getBlock()->findAncestorOpInBlock(*user);
      return member == last && at &&
             (at == row || position.lookup(runsAt(at)) > position.lookup(row));
    });
  });
}

/// Kernels under construction: a kernel is sealed once a value of it is
/// read from outside, after which it cannot grow.
struct Former {
  Former(Block &body, const FusionPolicy &policy)
      : body(body), policy(policy) {}

  struct Building {
    Kernel kernel;
    bool sealed = false;
  };

  /// Where `op`'s values exist and where it reads (RunsAt).
  Operation *runsAt(Operation *op) {
    auto it = kernelOf.find(op);
    return it == kernelOf.end() ? op : runPoint(kernels[it->second].kernel);
  }

  int kernelOfValue(Value value) {
    Operation *def = value.getDefiningOp();
    auto it = def ? kernelOf.find(def) : kernelOf.end();
    return it == kernelOf.end() ? -1 : it->second;
  }

  /// Whether elementwise `op` may join kernel `index` (through one of its
  /// operands defined there): its result has the kernel's shape and the
  /// kernel is not sealed. In a kernel with a reduction only the epilogue
  /// grows: `op` may read the reduction's result and epilogue values, not
  /// prologue values (those exist only inside the reduction's inner loop).
  /// Operands from outside need no check: they are defined before `op`,
  /// and a kernel that produced one is sealed by the read, so it runs
  /// before `op` and hence before this kernel, which runs at its last op.
  bool canJoin(Operation *op, int index) {
    Building &k = kernels[index];
    if (k.sealed ||
        llvm::ArrayRef<int64_t>(k.kernel.shape) != shapeOf(op->getResult(0)))
      return false;
    return llvm::all_of(op->getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      if (!inKernel(kernelOf, def, index))
        return true;
      return !k.kernel.reduction || def == k.kernel.reduction ||
             position[def] > position[k.kernel.reduction];
    });
  }

  /// Moves every member of `from` into `into`, keeping program order. Both
  /// are unsealed elementwise kernels of one shape: no op outside either
  /// has read their values, so the union may run at the later of their
  /// last ops, where every member's operands exist.
  void merge(int into, int from) {
    Kernel &target = kernels[into].kernel, &source = kernels[from].kernel;
    for (Operation *member : source.members)
      kernelOf[member] = into;
    target.members.append(source.members.begin(), source.members.end());
    llvm::sort(target.members, [&](Operation *a, Operation *b) {
      return position[a] < position[b];
    });
    source.members.clear();
  }

  int newKernel(llvm::ArrayRef<int64_t> shape) {
    Building k;
    k.kernel.shape.assign(shape.begin(), shape.end());
    kernels.push_back(std::move(k));
    return static_cast<int>(kernels.size()) - 1;
  }

  /// An elementwise op joins the kernel of one of its operands when
  /// canJoin allows it; the kernel then runs at its last op's position.
  /// A reduction takes the kernel of its input as its prologue when that
  /// kernel is not sealed (the reduction is the first op outside it to read
  /// its values, so values others read later can be stored from inside the
  /// reduction's loop, which visits every input element once); later
  /// elementwise ops of the result's shape join as its epilogue.
  void form() {
    unsigned index = 0;
    for (Operation &op : body.getOperations())
      position[&op] = ++index; // Arguments are at position 0.
    for (Operation &op : body.getOperations()) {
      int joined = -1;
      if (isReduction(&op)) {
        Value input = op.getOperand(0);
        int prologue = policy.fuseReductions ? kernelOfValue(input) : -1;
        if (prologue >= 0 && !kernels[prologue].sealed &&
            !kernels[prologue].kernel.reduction &&
            llvm::ArrayRef<int64_t>(kernels[prologue].kernel.shape) ==
                shapeOf(input))
          joined = prologue;
        else
          joined = newKernel(shapeOf(op.getResult(0)));
        Kernel &k = kernels[joined].kernel;
        llvm::ArrayRef<int64_t> shape = shapeOf(op.getResult(0));
        k.shape.assign(shape.begin(), shape.end());
        k.reduction = &op;
        k.members.push_back(&op);
        kernelOf[&op] = joined;
      } else if (isElementwise(&op)) {
        for (Value operand : op.getOperands()) {
          int candidate = kernelOfValue(operand);
          if (candidate < 0)
            continue;
          if (kernels[candidate].kernel.reduction && !policy.fuseReductions &&
              !(policy.acceptsReductionEpilogue &&
                policy.acceptsReductionEpilogue(kernels[candidate].kernel,
                                                &op)))
            continue;
          if (canJoin(&op, candidate)) {
            joined = candidate;
            break;
          }
        }
        if (joined < 0)
          joined = newKernel(shapeOf(op.getResult(0)));
        // An op reading two unsealed elementwise kernels of its shape
        // unites them (an optimizer's update reads the moment and the
        // gradient chains): one loop, no stored values between them.
        if (policy.mergeGroups && !kernels[joined].kernel.reduction)
          for (Value operand : op.getOperands()) {
            int other = kernelOfValue(operand);
            if (other < 0 || other == joined || kernels[other].sealed ||
                kernels[other].kernel.reduction ||
                kernels[other].kernel.shape != kernels[joined].kernel.shape)
              continue;
            merge(joined, other);
          }
        kernels[joined].kernel.members.push_back(&op);
        kernelOf[&op] = joined;
      }
      // Reading a kernel's value from outside seals that kernel.
      for (Value operand : op.getOperands()) {
        int k = kernelOfValue(operand);
        if (k >= 0 && k != joined)
          kernels[k].sealed = true;
      }
    }
    if (policy.fuseGemmEpilogues)
      attachGemmEpilogues();
    if (policy.acceptsRowEpilogue)
      attachRowEpilogues();
    if (policy.acceptsRowPrologue)
      attachRowPrologues();
  }

  /// An op that is neither elementwise nor a reduction whose first operand
  /// is the last value of a kernel without a reduction, GEMM, row op or
  /// row input, of that operand's shape, whose other values only the
  /// kernel reads, and whose last value nothing between the kernel and the
  /// op reads, gets that kernel as its rows when the policy accepts it.
  void attachRowPrologues() {
    for (Operation &op : body.getOperations()) {
      Value rows = rowOpValue(&op, /*operand=*/true);
      if (!rows)
        continue;
      Operation *def = rows.getDefiningOp();
      auto it = def ? kernelOf.find(def) : kernelOf.end();
      if (it == kernelOf.end())
        continue;
      Kernel &k = kernels[it->second].kernel;
      if (k.reduction || k.gemm || k.row || k.rowInput ||
          k.members.back() != def ||
          llvm::ArrayRef<int64_t>(k.shape) != shapeOf(rows) ||
          llvm::count(op.getOperands(), rows) != 1 ||
          !isRowInput(k, &op, it->second, kernelOf, position,
                      [&](Operation *op) { return runsAt(op); }))
        continue;
      if (policy.acceptsRowPrologue(&op, k))
        k.rowInput = &op;
    }
  }

  /// An op that is neither elementwise nor a reduction, whose first result
  /// is read by one op only, in a kernel of its shape without a reduction,
  /// GEMM or row op, and whose kernel reads nothing else defined after the
  /// op, gets that kernel as its epilogue when the policy accepts it.
  void attachRowEpilogues() {
    for (Operation &op : body.getOperations()) {
      Value result = rowOpValue(&op, /*operand=*/false);
      if (!result || result.use_empty() || !llvm::all_equal(result.getUsers()))
        continue;
      auto it = kernelOf.find(*result.getUsers().begin());
      if (it == kernelOf.end())
        continue;
      Kernel &k = kernels[it->second].kernel;
      if (k.reduction || k.gemm || k.row ||
          llvm::ArrayRef<int64_t>(k.shape) != shapeOf(result) ||
          !readsOnlyBefore(k, &op, it->second, kernelOf, position,
                           [&](Operation *op) { return runsAt(op); }))
        continue;
      if (policy.acceptsRowEpilogue(&op, k))
        k.row = &op;
    }
  }

  /// A matmul whose result is read by one elementwise op only, in a kernel
  /// of the result's shape without a reduction, gets that kernel as its
  /// epilogue: the GEMM writes into the kernel's output, which the kernel
  /// then updates in place.
  void attachGemmEpilogues() {
    for (Operation &op : body.getOperations()) {
      auto matmul = dyn_cast<nn::MatmulOp>(op);
      if (!matmul || matmul.getResult().use_empty())
        continue;
      Operation *user = *matmul.getResult().getUsers().begin();
      if (!llvm::all_equal(matmul.getResult().getUsers()))
        continue;
      auto it = kernelOf.find(user);
      if (it == kernelOf.end())
        continue;
      Kernel &k = kernels[it->second].kernel;
      if (k.reduction || k.gemm ||
          llvm::ArrayRef<int64_t>(k.shape) != shapeOf(matmul.getResult()))
        continue;
      if (policy.acceptsGemmEpilogue && !policy.acceptsGemmEpilogue(matmul, k))
        splitAcceptedPrefix(matmul, it->second);
      else
        kernels[it->second].kernel.gemm = matmul;
    }
  }

  /// When the policy takes a prefix of kernel `index` but not all of it
  /// (ops that joined after what the GEMM library runs, such as a cast of
  /// the epilogue's result), the prefix becomes the matmul's epilogue and
  /// the rest a kernel of its own, which reads the prefix's result from
  /// memory. The decision then does not depend on which later ops share
  /// the fragment: a schedule that moves a reader elsewhere (ZB-H1's W
  /// work) would otherwise change which ops joined, and with them the
  /// bits of an epilogue that skips a rounding.
  void splitAcceptedPrefix(nn::MatmulOp matmul, int index) {
    llvm::SmallVector<Operation *> members = kernels[index].kernel.members;
    for (size_t length = members.size() - 1; length > 0; --length) {
      llvm::ArrayRef<Operation *> prefix(members.data(), length);
      // The rest may read only the prefix's last value, which the GEMM
      // stores; the prefix's other values never reach memory.
      bool readable = llvm::all_of(prefix.drop_back(), [&](Operation *op) {
        return llvm::all_of(op->getUsers(), [&](Operation *user) {
          return llvm::is_contained(prefix, user);
        });
      });
      if (!readable || prefix.back()->getNumResults() != 1)
        continue;
      Kernel candidate = kernels[index].kernel;
      candidate.members.assign(prefix.begin(), prefix.end());
      if (!policy.acceptsGemmEpilogue(matmul, candidate))
        continue;
      int rest = newKernel(kernels[index].kernel.shape);
      for (Operation *op :
           llvm::ArrayRef<Operation *>(members).drop_front(length)) {
        kernels[rest].kernel.members.push_back(op);
        kernelOf[op] = rest;
      }
      kernels[index].kernel.members.assign(prefix.begin(), prefix.end());
      kernels[index].kernel.gemm = matmul;
      return;
    }
  }

  Block &body;
  const FusionPolicy &policy;
  llvm::DenseMap<Operation *, unsigned> position;
  llvm::DenseMap<Operation *, int> kernelOf;
  std::vector<Building> kernels;
};

/// The in-place candidates of a fragment under `kernels` (kernelOf maps
/// each member to its kernel): a result bound to `update = @p` that a flat
/// elementwise kernel (no reduction, no GEMM, every input of its shape or
/// a single element) computes, where the one argument bound to
/// `param = @p` has the same type and is read by that kernel only. The
/// kernel reads the argument's element i before writing the result's
/// element i (a value returned twice is copied into its results at the
/// end), and nothing reads the argument afterwards.
std::vector<std::pair<unsigned, unsigned>>
inPlaceCandidates(Operation *function, Block &body,
                  const std::vector<Kernel> &kernels,
                  const llvm::DenseMap<Operation *, int> &kernelOf) {
  std::vector<std::pair<unsigned, unsigned>> pairs;
  auto fragment = dyn_cast<mpmd::FragmentOp>(function);
  if (!fragment)
    return pairs;
  Operation *terminator = body.getTerminator();
  for (unsigned r = 0; r < fragment.getNumResults(); ++r) {
    FlatSymbolRefAttr param = fragment.getUpdateBinding(r);
    if (!param)
      continue;
    Value result = terminator->getOperand(r);
    Operation *def = result.getDefiningOp();
    auto it = def ? kernelOf.find(def) : kernelOf.end();
    if (it == kernelOf.end())
      continue;
    const Kernel &k = kernels[it->second];
    if (k.reduction || k.gemm)
      continue;
    bool flat = llvm::all_of(k.members, [&](Operation *member) {
      return llvm::all_of(member->getOperands(), [&](Value operand) {
        return inKernel(kernelOf, operand.getDefiningOp(), it->second) ||
               shapeOf(operand) == llvm::ArrayRef<int64_t>(k.shape) ||
               cast<RankedTensorType>(operand.getType()).getNumElements() == 1;
      });
    });
    if (!flat)
      continue;
    // One argument bound to the parameter: a second would alias the
    // buffer the update overwrites.
    unsigned bound = 0;
    for (unsigned a = 0; a < fragment.getNumArguments(); ++a)
      bound += fragment.getParamBinding(a) == param;
    for (unsigned a = 0; bound == 1 && a < fragment.getNumArguments(); ++a) {
      if (fragment.getParamBinding(a) != param)
        continue;
      Value argument = body.getArgument(a);
      if (argument.getType() != result.getType() ||
          !llvm::all_of(argument.getUsers(), [&](Operation *user) {
            return inKernel(kernelOf, user, it->second);
          }))
        break;
      pairs.push_back({r, a});
      break;
    }
  }
  return pairs;
}

} // namespace

KernelPlan tandem::lowering::formKernels(Operation *function,
                                         const FusionPolicy &policy) {
  KernelPlan plan;
  Block *body = bodyOf(function);
  if (!body)
    return plan;
  Former former(*body, policy);
  former.form();
  for (Former::Building &k : former.kernels)
    plan.kernels.push_back(std::move(k.kernel));
  plan.inPlace =
      inPlaceCandidates(function, *body, plan.kernels, former.kernelOf);
  return plan;
}

void tandem::lowering::recordKernels(Operation *function,
                                     const KernelPlan &plan) {
  Block *body = bodyOf(function);
  if (!body)
    return;
  function->removeAttr(kInPlaceAttr);
  for (Operation &op : body->getOperations()) {
    op.removeAttr(kKernelAttr);
    op.removeAttr(kGemmAttr);
    op.removeAttr(kRowAttr);
    op.removeAttr(kRowInputAttr);
  }
  Builder b(function->getContext());
  for (auto [id, kernel] : llvm::enumerate(plan.kernels)) {
    for (Operation *member : kernel.members)
      member->setAttr(kKernelAttr, b.getI64IntegerAttr(id));
    if (kernel.gemm)
      kernel.gemm->setAttr(kGemmAttr, b.getI64IntegerAttr(id));
    if (kernel.row)
      kernel.row->setAttr(kRowAttr, b.getI64IntegerAttr(id));
    if (kernel.rowInput)
      kernel.rowInput->setAttr(kRowInputAttr, b.getI64IntegerAttr(id));
  }
  if (!plan.inPlace.empty()) {
    llvm::SmallVector<int64_t> flat;
    for (auto [result, argument] : plan.inPlace)
      flat.append({result, argument});
    function->setAttr(kInPlaceAttr, b.getDenseI64ArrayAttr(flat));
  }
}

FailureOr<std::optional<KernelPlan>>
tandem::lowering::readKernels(Operation *function) {
  Block *body = bodyOf(function);
  if (!body)
    return std::optional<KernelPlan>();
  bool any = function->hasAttr(kInPlaceAttr);
  llvm::DenseMap<Operation *, unsigned> position;
  unsigned index = 0;
  for (Operation &op : body->getOperations()) {
    position[&op] = ++index;
    any |= op.hasAttr(kKernelAttr) || op.hasAttr(kGemmAttr) ||
           op.hasAttr(kRowAttr) || op.hasAttr(kRowInputAttr);
  }
  if (!any)
    return std::optional<KernelPlan>();

  // Ids: integers in [0, number of ops), so the plan stays small.
  auto idOf = [&](Operation &op, llvm::StringRef name,
                  int64_t &id) -> LogicalResult {
    auto attr = op.getAttrOfType<IntegerAttr>(name);
    if (!attr || attr.getValue().getSignificantBits() > 63 ||
        attr.getInt() < 0 ||
        attr.getInt() >= static_cast<int64_t>(position.size()))
      return op.emitError()
             << "'" << name << "' must be a kernel number in [0, "
             << position.size() << ")";
    id = attr.getInt();
    return success();
  };
  KernelPlan plan;
  llvm::DenseMap<Operation *, int> kernelOf;
  std::map<int64_t, Operation *> gemms, rows, rowInputs;
  // A row op (neither elementwise nor a reduction) whose value (its first
  // result for an epilogue, its first operand for a row input) is a
  // tensor, one per kernel.
  auto readRowOp = [&](Operation &op, llvm::StringRef name,
                       std::map<int64_t, Operation *> &ops,
                       bool operand) -> LogicalResult {
    int64_t id;
    if (!op.hasAttr(name))
      return success();
    if (failed(idOf(op, name, id)))
      return failure();
    if (!rowOpValue(&op, operand) || !ops.insert({id, &op}).second)
      return op.emitError() << "'" << name
                            << "' belongs on one row op (neither "
                               "elementwise nor a reduction) per kernel";
    return success();
  };
  for (Operation &op : body->getOperations()) {
    int64_t id;
    if (failed(readRowOp(op, kRowInputAttr, rowInputs, /*operand=*/true)) ||
        failed(readRowOp(op, kRowAttr, rows, /*operand=*/false)))
      return failure();
    if (op.hasAttr(kGemmAttr)) {
      if (failed(idOf(op, kGemmAttr, id)))
        return failure();
      if (!isa<nn::MatmulOp>(op) || !gemms.insert({id, &op}).second)
        return op.emitError()
               << "'" << kGemmAttr << "' belongs on one nn.matmul per kernel";
    }
    if (!op.hasAttr(kKernelAttr))
      continue;
    if (failed(idOf(op, kKernelAttr, id)))
      return failure();
    if (!isElementwise(&op) && !isReduction(&op))
      return op.emitError() << "'" << op.getName()
                            << "' is neither elementwise nor a reduction: it "
                               "cannot be a kernel member";
    if (plan.kernels.size() <= static_cast<size_t>(id))
      plan.kernels.resize(id + 1);
    Kernel &k = plan.kernels[id];
    if (isReduction(&op)) {
      if (k.reduction)
        return op.emitError() << "kernel " << id << " has a second reduction";
      k.reduction = &op;
    }
    k.members.push_back(&op);
    kernelOf[&op] = static_cast<int>(id);
  }
  // The ops whose epilogues kernels are: each names a kernel with members.
  for (auto [ops, attr, field] :
       {std::make_tuple(&gemms, kGemmAttr, &Kernel::gemm),
        std::make_tuple(&rows, kRowAttr, &Kernel::row),
        std::make_tuple(&rowInputs, kRowInputAttr, &Kernel::rowInput)})
    for (auto [id, op] : *ops) {
      if (static_cast<size_t>(id) >= plan.kernels.size() ||
          plan.kernels[id].members.empty())
        return op->emitError() << "'" << attr << "' names kernel " << id
                               << ", which has no members";
      plan.kernels[id].*field = op;
    }

  // What formKernels guarantees, checked: one iteration shape (the
  // prologue iterates over the reduction's input), no member reading a
  // prologue value from the epilogue, no value of a kernel read outside it
  // before the kernel runs (at its last member), a GEMM epilogue that is
  // its matmul's only reader, of its shape, without a reduction.
  auto readAt = [&](Operation *op) {
    auto it = kernelOf.find(op);
    return it == kernelOf.end() ? op : runPoint(plan.kernels[it->second]);
  };
  for (auto [id, k] : llvm::enumerate(plan.kernels)) {
    if (k.members.empty())
      continue;
    Operation *last = k.members.back();
    // A row op's rows run at the op (checked below).
    Operation *runsAt = k.rowInput ? k.rowInput : last;
    Value shaped = k.reduction ? k.reduction->getResult(0)
                               : k.members.front()->getResult(0);
    llvm::ArrayRef<int64_t> shape = shapeOf(shaped);
    k.shape.assign(shape.begin(), shape.end());
    for (Operation *member : k.members) {
      bool prologue = k.reduction && position[member] < position[k.reduction];
      llvm::ArrayRef<int64_t> expected =
          prologue ? shapeOf(k.reduction->getOperand(0)) : shape;
      if (member != k.reduction && shapeOf(member->getResult(0)) != expected)
        return member->emitError()
               << "kernel " << id << " iterates over a shape its member's "
               << "result does not have";
      for (Value operand : member->getOperands()) {
        Operation *def = operand.getDefiningOp();
        // The reduction reads the prologue's value: that is its input.
        if (!inKernel(kernelOf, def, static_cast<int>(id)) || !k.reduction ||
            prologue || member == k.reduction)
          continue;
        if (def != k.reduction && position[def] < position[k.reduction])
          return member->emitError()
                 << "kernel " << id << "'s epilogue reads a prologue value";
      }
      for (Operation *user : member->getUsers()) {
        Operation *at = body->findAncestorOpInBlock(*user);
        if (!inKernel(kernelOf, user, static_cast<int>(id)) && at &&
            at != k.rowInput && position[at] <= position[runsAt] &&
            !at->hasTrait<OpTrait::IsTerminator>())
          return user->emitError()
                 << "reads a value of kernel " << id << " before the kernel "
                 << (k.rowInput ? "runs (at the row op whose rows it computes)"
                                : "runs (at its last member)");
      }
    }
    if (k.row) {
      Value first = k.row->getResult(0);
      // It reads the op's first result, which nothing else reads.
      bool before = readsOnlyBefore(k, k.row, static_cast<int>(id), kernelOf,
                                    position, readAt);
      if (k.reduction || k.gemm || shapeOf(first) != shape ||
          first.use_empty() || !llvm::all_equal(first.getUsers()) ||
          !inKernel(kernelOf, *first.getUsers().begin(),
                    static_cast<int>(id)) ||
          !before)
        return k.row->emitError()
               << "kernel " << id << " cannot be this op's row epilogue: it "
               << "must be the only reader of its first result, of its "
                  "shape, without a reduction or GEMM, reading nothing "
                  "defined after the op";
    }
    if (k.rowInput) {
      Value rows = k.rowInput->getOperand(0);
      if (k.reduction || k.gemm || k.row || rows.getDefiningOp() != last ||
          shapeOf(rows) != shape ||
          llvm::count(k.rowInput->getOperands(), rows) != 1 ||
          !isRowInput(k, k.rowInput, static_cast<int>(id), kernelOf, position,
                      readAt))
        return k.rowInput->emitError()
               << "kernel " << id << " cannot compute this op's rows: it "
               << "must end with the op's first operand, of its shape, "
                  "without a reduction, GEMM or row op, its other values "
                  "read only inside it and its last only after the op";
    }
    if (k.gemm) {
      Value product = k.gemm->getResult(0);
      // One reader op, a member: the kernel rewrites the product's buffer
      // in place, element by element.
      if (k.reduction || shapeOf(product) != shape || product.use_empty() ||
          !llvm::all_equal(product.getUsers()) ||
          !inKernel(kernelOf, *product.getUsers().begin(),
                    static_cast<int>(id)))
        return k.gemm->emitError()
               << "kernel " << id << " cannot be this matmul's epilogue: it "
               << "must be the product's only reader, of its shape, without "
                  "a reduction";
    }
  }

  if (auto pairs = function->getAttrOfType<DenseI64ArrayAttr>(kInPlaceAttr)) {
    std::vector<std::pair<unsigned, unsigned>> safe =
        inPlaceCandidates(function, *body, plan.kernels, kernelOf);
    llvm::ArrayRef<int64_t> flat = pairs.asArrayRef();
    if (flat.size() % 2)
      return function->emitError()
             << "'" << kInPlaceAttr << "' must hold (result, argument) pairs";
    for (size_t i = 0; i < flat.size(); i += 2) {
      std::pair<unsigned, unsigned> pair{static_cast<unsigned>(flat[i]),
                                         static_cast<unsigned>(flat[i + 1])};
      if (flat[i] < 0 || flat[i + 1] < 0 || !llvm::is_contained(safe, pair))
        return function->emitError()
               << "'" << kInPlaceAttr << "': result " << flat[i]
               << " cannot be written over argument " << flat[i + 1];
      plan.inPlace.push_back(pair);
    }
  } else if (function->hasAttr(kInPlaceAttr)) {
    return function->emitError()
           << "'" << kInPlaceAttr << "' must be an array<i64>";
  }
  return std::optional<KernelPlan>(std::move(plan));
}

void tandem::lowering::recordAccumulated(Operation *function,
                                         llvm::ArrayRef<int64_t> results) {
  if (results.empty()) {
    function->removeAttr(kAccumulatedAttr);
    return;
  }
  function->setAttr(kAccumulatedAttr,
                    DenseI64ArrayAttr::get(function->getContext(), results));
}

FailureOr<llvm::SmallVector<int64_t>>
tandem::lowering::readAccumulated(Operation *function) {
  llvm::SmallVector<int64_t> results;
  Attribute attr = function->getAttr(kAccumulatedAttr);
  if (!attr)
    return results;
  auto indices = dyn_cast<DenseI64ArrayAttr>(attr);
  auto callable = dyn_cast<FunctionOpInterface>(function);
  if (!indices || !callable)
    return function->emitError()
           << kAccumulatedAttr << " must be an array of result indices";
  int64_t count = static_cast<int64_t>(callable.getResultTypes().size());
  for (int64_t index : indices.asArrayRef()) {
    if (index < 0 || index >= count ||
        (!results.empty() && index <= results.back()))
      return function->emitError()
             << kAccumulatedAttr << " holds " << index
             << ", which is no result of the function or out of order";
    results.push_back(index);
  }
  return results;
}
