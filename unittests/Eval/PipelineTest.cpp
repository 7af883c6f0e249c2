//===- PipelineTest.cpp - the in-process transport and pipeline executor --===//

#include "EvalTestUtils.h"

#include "tandem/Eval/Parameters.h"
#include "tandem/Eval/Pipeline.h"

#include <atomic>
#include <chrono>
#include <thread>

using namespace tandem::eval;
using namespace tandem::eval::test;

namespace {

/// A message of one f32 element carrying `value` (for sends).
Message message(mlir::MLIRContext *context, Message::Kind kind, int64_t peer,
                int64_t channel, double value = 0.0) {
  Message m;
  m.kind = kind;
  m.peer = peer;
  m.channel = channel;
  m.payload = tensorOf(context, "tensor<1xf32>", {value});
  m.type = m.payload.getType();
  m.wire = m.type.getElementType();
  m.slot = "@f[0]";
  m.what = (kind == Message::Kind::Send ? "send" : "recv") +
           std::string(" on channel ") + std::to_string(channel);
  return m;
}

constexpr auto kSend = Message::Kind::Send;
constexpr auto kRecv = Message::Kind::Recv;

/// Runs `body(rank)` for every rank on its own thread and returns each
/// rank's error message ("" on success).
template <typename Body>
std::vector<std::string> onRanks(int64_t numRanks, Body body) {
  std::vector<std::string> errors(numRanks);
  std::vector<std::thread> threads;
  for (int64_t rank = 0; rank < numRanks; ++rank)
    threads.emplace_back([&, rank] {
      if (llvm::Error error = body(rank))
        errors[rank] = llvm::toString(std::move(error));
    });
  for (std::thread &thread : threads)
    thread.join();
  return errors;
}

struct TransportTest : ::testing::Test {
  void SetUp() override {
    mlir::DialectRegistry registry;
    tandem::registerAllDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
  }
  std::unique_ptr<mlir::MLIRContext> context;
};

TEST_F(TransportTest, SendCompletesOnlyWhenTheRecvIsPosted) {
  InProcessTransport transport(2);
  std::atomic<bool> sent{false};
  std::vector<Message> send = {message(context.get(), kSend, 1, 0, 7.0)};
  std::thread sender([&] {
    llvm::Error error = transport.exchange(0, send);
    EXPECT_FALSE(error) << llvm::toString(std::move(error));
    sent = true;
  });
  // Rank 1 has not posted anything: a buffered send would return now.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(sent);
  std::vector<Message> recv = {message(context.get(), kRecv, 0, 0)};
  llvm::Error error = transport.exchange(1, recv);
  EXPECT_FALSE(error) << llvm::toString(std::move(error));
  sender.join();
  EXPECT_TRUE(sent);
  EXPECT_TRUE(send[0].completed && recv[0].completed);
  EXPECT_EQ(recv[0].payload.data, std::vector<double>{7.0});
}

TEST_F(TransportTest, MessagesMatchInOrderPerChannel) {
  InProcessTransport transport(2);
  auto *ctx = context.get();
  std::vector<Message> sends = {
      message(ctx, kSend, 1, 0, 1.0), message(ctx, kSend, 1, 1, 9.0),
      message(ctx, kSend, 1, 0, 2.0), message(ctx, kSend, 1, 0, 3.0)};
  // Rank 1 receives channel 1 first: pairing follows channels, not the
  // order across channels.
  std::vector<Message> recvs = {
      message(ctx, kRecv, 0, 1), message(ctx, kRecv, 0, 0),
      message(ctx, kRecv, 0, 0), message(ctx, kRecv, 0, 0)};
  auto errors = onRanks(2, [&](int64_t rank) {
    return transport.exchange(rank, rank == 0 ? llvm::MutableArrayRef(sends)
                                              : llvm::MutableArrayRef(recvs));
  });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  std::vector<double> got;
  for (const Message &m : recvs)
    got.push_back(m.payload.data[0]);
  EXPECT_EQ(got, (std::vector<double>{9.0, 1.0, 2.0, 3.0}));
}

TEST_F(TransportTest, SendThenRecvInOneGroupCompletes) {
  // Both neighbours send first; posted as one group, neither waits for the
  // other's send to complete before posting its receive.
  InProcessTransport transport(2);
  std::vector<std::vector<Message>> groups(2);
  for (int64_t rank = 0; rank < 2; ++rank)
    groups[rank] = {message(context.get(), kSend, 1 - rank, 0, 10.0 + rank),
                    message(context.get(), kRecv, 1 - rank, 0)};
  auto errors = onRanks(
      2, [&](int64_t rank) { return transport.exchange(rank, groups[rank]); });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(groups[0][1].payload.data[0], 11.0);
  EXPECT_EQ(groups[1][1].payload.data[0], 10.0);
}

TEST_F(TransportTest, DeadlockingPairIsReportedNotHung) {
  // Each rank sends in a group of its own before receiving: under
  // rendezvous semantics neither send can complete.
  InProcessTransport transport(2);
  std::vector<std::vector<Message>> sends(2), recvs(2);
  for (int64_t rank = 0; rank < 2; ++rank) {
    sends[rank] = {message(context.get(), kSend, 1 - rank, 0, 1.0)};
    recvs[rank] = {message(context.get(), kRecv, 1 - rank, 0)};
  }
  auto errors = onRanks(2, [&](int64_t rank) -> llvm::Error {
    if (llvm::Error error = transport.exchange(rank, sends[rank]))
      return error;
    return transport.exchange(rank, recvs[rank]);
  });
  for (const std::string &error : errors) {
    EXPECT_NE(error.find("deadlock"), std::string::npos) << error;
    EXPECT_NE(error.find("rank 0: send on channel 0: rank 1 has not posted "
                         "the matching recv"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("rank 1: send on channel 0: rank 0 has not posted "
                         "the matching recv"),
              std::string::npos)
        << error;
  }
  EXPECT_TRUE(transport.isAborted());
}

TEST_F(TransportTest, WaitingOnAFinishedRankIsADeadlock) {
  InProcessTransport transport(2);
  std::vector<Message> recv = {message(context.get(), kRecv, 1, 3)};
  auto errors = onRanks(2, [&](int64_t rank) -> llvm::Error {
    if (rank == 1) {
      transport.finish(1);
      return llvm::Error::success();
    }
    return transport.exchange(0, recv);
  });
  EXPECT_NE(errors[0].find("rank 0: recv on channel 3: rank 1 has not posted "
                           "the matching send (it has finished its action "
                           "list)"),
            std::string::npos)
      << errors[0];
  EXPECT_EQ(errors[1], "");
}

TEST_F(TransportTest, PairsMustAgreeOnTheWireType) {
  InProcessTransport transport(2);
  std::vector<Message> send = {message(context.get(), kSend, 1, 0, 1.0)};
  std::vector<Message> recv = {message(context.get(), kRecv, 0, 0)};
  recv[0].wire = mlir::BFloat16Type::get(context.get());
  auto errors = onRanks(2, [&](int64_t rank) {
    return transport.exchange(rank, rank == 0 ? llvm::MutableArrayRef(send)
                                              : llvm::MutableArrayRef(recv));
  });
  for (const std::string &error : errors)
    EXPECT_NE(error.find("disagree on the wire type: f32 vs bf16"),
              std::string::npos)
        << error;
}

/// All-reduces one bf16 element per rank over `group` and returns what
/// each member got.
std::vector<double> allReduce(mlir::MLIRContext *context,
                              llvm::ArrayRef<int64_t> group,
                              std::vector<double> values) {
  InProcessTransport transport(values.size());
  std::vector<Tensor> tensors;
  for (double value : values)
    tensors.push_back(tensorOf(context, "tensor<1xbf16>", {value}));
  Collective op;
  op.kind = Collective::Kind::AllReduce;
  op.reduction = Reduction::Sum;
  op.group.assign(group.begin(), group.end());
  op.type = tensors[0].getType();
  op.what = "all_reduce";
  auto errors = onRanks(values.size(), [&](int64_t rank) {
    return transport.collective(rank, op, tensors[rank]);
  });
  std::vector<double> results;
  for (auto [rank, tensor] : llvm::enumerate(tensors)) {
    EXPECT_EQ(errors[rank], "");
    results.push_back(tensor.data[0]);
  }
  return results;
}

TEST_F(TransportTest, AllReduceAddsInGroupOrderRoundingEachStep) {
  // In bf16 (8 significant bits), 1 + 2^-8 rounds back to 1, while
  // 2^-8 + 2^-8 = 2^-7 is exact and 1 + 2^-7 is representable.
  double tiny = 1.0 / 256.0;
  std::vector<double> values = {1.0, tiny, tiny};
  EXPECT_EQ(allReduce(context.get(), {0, 1, 2}, values),
            (std::vector<double>(3, 1.0)));
  EXPECT_EQ(allReduce(context.get(), {1, 2, 0}, values),
            (std::vector<double>(3, 1.0 + 2 * tiny)));
}

TEST_F(TransportTest, BroadcastCopiesTheRootsValue) {
  InProcessTransport transport(3);
  std::vector<Tensor> tensors;
  for (int rank = 0; rank < 3; ++rank)
    tensors.push_back(
        tensorOf(context.get(), "tensor<2xf32>", {double(rank), double(rank)}));
  Collective op;
  op.kind = Collective::Kind::Broadcast;
  op.group = {2, 0, 1};
  op.root = 2;
  op.type = tensors[0].getType();
  op.what = "broadcast";
  auto errors = onRanks(3, [&](int64_t rank) {
    return transport.collective(rank, op, tensors[rank]);
  });
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(errors[rank], "");
    EXPECT_EQ(tensors[rank].data, (std::vector<double>{2.0, 2.0}));
  }
}

//===----------------------------------------------------------------------===//
// The executor
//===----------------------------------------------------------------------===//

/// A 2-stage program: stage 0 doubles its microbatch of input 0 and sends
/// it; stage 1 adds @b and the optimizer sums the microbatches into @b's
/// update; output 0 is that sum. RANK0 and RANK1 are the action lists.
std::string program(const std::string &rank0, const std::string &rank1,
                    const std::string &outputAttr = "mpmd.output = 0 : i64") {
  return R"(
  nn.parameter @b : tensor<2x3xf32> = ones
  mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
    mpmd.fragment @f0 stage 0 chunk 0 kind fwd
        (%x: tensor<2x3xf32> {mpmd.input = 0 : i64}) -> tensor<2x3xf32> {
      %y = nn.add %x, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
      mpmd.yield %y : tensor<2x3xf32>
    }
    mpmd.fragment @f1 stage 1 chunk 0 kind fwd
        (%h: tensor<2x3xf32>, %b: tensor<2x3xf32> {mpmd.param = @b})
        -> tensor<2x3xf32> {
      %y = nn.add %h, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
      mpmd.yield %y : tensor<2x3xf32>
    }
    mpmd.fragment @opt stage 1 chunk 0 kind optimizer (%g: tensor<2x3xf32>)
        -> (tensor<2x3xf32> {mpmd.update = @b}, tensor<2x3xf32> {)" +
         outputAttr + R"(}) {
      mpmd.yield %g, %g : tensor<2x3xf32>, tensor<2x3xf32>
    }
    mpmd.transfer @f0[0] -> @f1[0] : tensor<2x3xf32>
    mpmd.transfer @f1[0] -> @opt[0] : tensor<2x3xf32>
    mpmd.rank 0 {)" +
         rank0 + R"(}
    mpmd.rank 1 {)" +
         rank1 + R"(}
  })";
}

const char *kRank0 = R"(
      mpmd.run @f0 microbatch 0
      mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<2x3xf32> wire f32
      mpmd.run @f0 microbatch 1
      mpmd.send @f0[0] microbatch 1 to 1 channel 0 : tensor<2x3xf32> wire f32
)";
const char *kRank1 = R"(
      mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<2x3xf32> wire f32
      mpmd.run @f1 microbatch 0
      mpmd.recv @f0[0] microbatch 1 from 0 channel 0 : tensor<2x3xf32> wire f32
      mpmd.run @f1 microbatch 1
      mpmd.run @opt
)";

/// Runs one step of @p in `source` on the 4x3 input 0..11.
llvm::Expected<PipelineStep>
runStep(const std::string &source,
        const std::string &inputType = "tensor<4x3xf32>") {
  Program parsed = parse(source);
  if (!parsed.module)
    return llvm::createStringError("parse error");
  auto executor = PipelineExecutor::create(*parsed.module, "p");
  if (!executor)
    return executor.takeError();
  auto parameters = initializeParameters(*parsed.module, 0);
  if (!parameters)
    return parameters.takeError();
  Interpreter interpreter(*parsed.module);
  interpreter.setParameters(std::move(*parameters));
  auto type = llvm::cast<mlir::RankedTensorType>(
      mlir::parseType(inputType, parsed.context.get()));
  std::vector<double> values(type.getNumElements());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = double(i);
  return (*executor)->run(interpreter,
                          {tensorOf(parsed.context.get(), inputType, values)});
}

std::string stepError(const std::string &source,
                      const std::string &inputType = "tensor<4x3xf32>") {
  auto step = runStep(source, inputType);
  if (step)
    return "";
  return llvm::toString(step.takeError());
}

TEST(PipelineExecutor, RunsAStepAcrossRanks) {
  auto step = runStep(program(kRank0, kRank1));
  ASSERT_TRUE(static_cast<bool>(step)) << llvm::toString(step.takeError());
  // Microbatch k is rows 2k, 2k+1; sum over k of (2x + 1).
  std::vector<double> expected;
  for (int i = 0; i < 6; ++i)
    expected.push_back((2.0 * i + 1.0) + (2.0 * (i + 6) + 1.0));
  ASSERT_EQ(step->outputs.size(), 1u);
  EXPECT_EQ(step->outputs[0].data, expected);
  ASSERT_EQ(step->updates.count("b"), 1u);
  EXPECT_EQ(step->updates["b"].data, expected);
}

TEST(PipelineExecutor, ResultsDoNotDependOnThreadTiming) {
  auto first = runStep(program(kRank0, kRank1));
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  for (int i = 0; i < 20; ++i) {
    auto again = runStep(program(kRank0, kRank1));
    ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
    EXPECT_EQ(again->outputs[0].data, first->outputs[0].data);
  }
}

TEST(PipelineExecutor, RejectsAWrongBatchSize) {
  std::string error = stepError(program(kRank0, kRank1), "tensor<6x3xf32>");
  EXPECT_NE(error.find("step input 0 must be tensor<4x3xf32> (2 microbatches "
                       "of tensor<2x3xf32>), got tensor<6x3xf32>"),
            std::string::npos)
      << error;
}

TEST(PipelineExecutor, RejectsAGapInTheOutputs) {
  std::string error =
      stepError(program(kRank0, kRank1, "mpmd.output = 1 : i64"));
  EXPECT_NE(error.find("step output 0 is produced by no fragment result"),
            std::string::npos)
      << error;
}

TEST(PipelineExecutor, ReportsADeadlockNamingEachRank) {
  // Rank 1 posts both receives in one group, the first on channel 1, where
  // rank 0 never sends: microbatch 0 still arrives (the group is posted at
  // once), then both ranks wait for good.
  std::string rank1 = R"(
      mpmd.recv @f0[0] microbatch 1 from 0 channel 1 : tensor<2x3xf32> wire f32
      mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<2x3xf32> wire f32
)";
  std::string error = stepError(program(kRank0, rank1));
  EXPECT_NE(error.find("deadlock under rendezvous semantics"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("rank 0: send of @f0[0] microbatch 1 to rank 1 on "
                       "channel 0"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("rank 1: recv of @f0[0] microbatch 1 from rank 0 on "
                       "channel 1"),
            std::string::npos)
      << error;
}

TEST(PipelineExecutor, AMissingSlotStopsEveryRank) {
  // Rank 1 runs @f1 without receiving its input; rank 0 then waits in its
  // send forever unless the error stops it.
  std::string rank1 = R"(
      mpmd.run @f1 microbatch 0
)";
  std::string error = stepError(program(kRank0, rank1));
  EXPECT_NE(error.find("'mpmd.run': argument 0 of @f1 needs slot @f0[0] "
                       "microbatch 0, which rank 1 does not hold"),
            std::string::npos)
      << error;
}

TEST(PipelineExecutor, RunsCollectivesBetweenRanks) {
  // Each stage sums its parameter; the all-reduce gives both ranks a + b
  // (in group order), and rank 0 broadcasts its own sum to rank 1.
  std::string source = R"(
  nn.parameter @a : tensor<2xf32> = ones
  nn.parameter @b : tensor<2xf32> = ones
  mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 1 {
    mpmd.fragment @n0 stage 0 chunk 0 kind step_prologue
        (%w: tensor<2xf32> {mpmd.param = @a}) -> (tensor<f32>, tensor<f32>) {
      %s = nn.reduce_sum %w [0] : tensor<2xf32> -> tensor<f32>
      mpmd.yield %s, %s : tensor<f32>, tensor<f32>
    }
    mpmd.fragment @n1 stage 1 chunk 0 kind step_prologue
        (%w: tensor<2xf32> {mpmd.param = @b}) -> tensor<f32> {
      %s = nn.reduce_sum %w [0] : tensor<2xf32> -> tensor<f32>
      mpmd.yield %s : tensor<f32>
    }
    mpmd.fragment @o0 stage 0 chunk 0 kind step_epilogue (%v: tensor<f32>)
        -> (tensor<f32> {mpmd.output = 0 : i64}) {
      mpmd.yield %v : tensor<f32>
    }
    mpmd.fragment @o1 stage 1 chunk 0 kind step_epilogue
        (%v: tensor<f32>, %r: tensor<f32>)
        -> (tensor<f32> {mpmd.output = 1 : i64},
            tensor<f32> {mpmd.output = 2 : i64}) {
      mpmd.yield %v, %r : tensor<f32>, tensor<f32>
    }
    mpmd.transfer @n0[0] -> @o0[0] : tensor<f32>
    mpmd.transfer @n1[0] -> @o1[0] : tensor<f32>
    mpmd.transfer @n0[1] -> @o1[1] : tensor<f32>
    mpmd.rank 0 {
      mpmd.run @n0
      mpmd.all_reduce sum @n0[0] group [0, 1] : tensor<f32>
      mpmd.broadcast @n0[1] root 0 group [0, 1] : tensor<f32>
      mpmd.run @o0
    }
    mpmd.rank 1 {
      mpmd.run @n1
      mpmd.all_reduce sum @n1[0] group [0, 1] : tensor<f32>
      mpmd.broadcast @n0[1] root 0 group [0, 1] : tensor<f32>
      mpmd.run @o1
    }
  })";
  Program parsed = parse(source);
  ASSERT_TRUE(parsed.module);
  auto executor = PipelineExecutor::create(*parsed.module, "p");
  ASSERT_TRUE(static_cast<bool>(executor))
      << llvm::toString(executor.takeError());
  Interpreter interpreter(*parsed.module);
  interpreter.setParameters(
      {{"a", tensorOf(parsed.context.get(), "tensor<2xf32>", {1.0, 2.0})},
       {"b", tensorOf(parsed.context.get(), "tensor<2xf32>", {10.0, 20.0})}});
  auto step = (*executor)->run(interpreter, {});
  ASSERT_TRUE(static_cast<bool>(step)) << llvm::toString(step.takeError());
  ASSERT_EQ(step->outputs.size(), 3u);
  EXPECT_EQ(step->outputs[0].data, std::vector<double>{33.0});
  EXPECT_EQ(step->outputs[1].data, std::vector<double>{33.0});
  EXPECT_EQ(step->outputs[2].data, std::vector<double>{3.0});
  EXPECT_TRUE(step->updates.empty());
}

} // namespace
