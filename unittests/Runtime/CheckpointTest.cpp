//===- CheckpointTest.cpp - per-rank training checkpoints -----------------===//
//
// The checkpoint core on synthetic manifests and tensors: round trip,
// atomic commit, fallback from a damaged latest checkpoint, refusal of
// another program with a message naming the difference, and pruning.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/Checkpoint.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tandem;
using namespace tandem::runtime;
namespace fs = std::filesystem;

namespace {

using Tensors = std::map<std::string, st::Tensor>;

ParameterInfo param(const std::string &name, std::vector<int64_t> shape) {
  ParameterInfo p;
  p.name = name;
  p.dtype = ElementType::F32;
  p.shape = std::move(shape);
  p.bytes = 4;
  for (int64_t d : p.shape)
    p.bytes *= d;
  return p;
}

ActionInfo run(const std::string &fragment, int64_t microbatch = -1) {
  ActionInfo a;
  a.op = ActionKind::Run;
  a.fragment = fragment;
  a.microbatch = microbatch;
  return a;
}

ActionInfo transfer(ActionKind op, const std::string &fragment,
                    int64_t microbatch, int64_t peer) {
  ActionInfo a;
  a.op = op;
  a.slot = {fragment, 0, microbatch};
  a.peer = peer;
  a.channel = 0;
  a.sequence = microbatch;
  a.shape = {4, 16};
  a.bytes = 256;
  return a;
}

/// Rank `rank` of a `stages`-stage pipeline of one replica and 2
/// microbatches: stage s holds h.<s>.weight (16x16), its Adam moments and,
/// on the last stage, the loss-scale state.
Manifest manifest(int64_t stages, int64_t rank) {
  Manifest m;
  m.path = "rank" + std::to_string(rank) + ".json";
  m.program = "gpt";
  m.grid.stages = stages;
  m.grid.chunks = 1;
  m.grid.replicas = 1;
  m.grid.microbatches = 2;
  m.grid.rank = rank;
  m.grid.stage = rank;
  std::string w = "h." + std::to_string(rank) + ".weight";
  m.parameters = {param(w, {16, 16}), param("opt.m." + w, {16, 16}),
                  param("opt.v." + w, {16, 16})};
  if (rank == stages - 1) {
    m.parameters.push_back(param(kLossScaleParameter, {}));
    m.parameters.push_back(param("opt.good_steps", {}));
  }
  InputInfo tokens;
  tokens.index = 0;
  tokens.dtype = ElementType::I32;
  tokens.microbatchShape = {4, 8};
  tokens.stepShape = {8, 8};
  m.inputs = {tokens};
  std::string s = "s" + std::to_string(rank);
  for (int64_t mb = 0; mb < 2; ++mb) {
    if (rank > 0)
      m.actions.push_back(transfer(ActionKind::Recv,
                                   "s" + std::to_string(rank - 1) + ".fwd", mb,
                                   rank - 1));
    m.actions.push_back(run(s + ".fwd", mb));
    if (rank + 1 < stages)
      m.actions.push_back(transfer(ActionKind::Send, s + ".fwd", mb, rank + 1));
  }
  for (int64_t mb = 0; mb < 2; ++mb)
    m.actions.push_back(run(s + ".bwd", mb));
  m.actions.push_back(run(s + ".opt"));
  return m;
}

/// Every parameter of `m`, filled with values that depend on the name and
/// `salt` (so two checkpoints' tensors differ).
Tensors values(const Manifest &m, float salt) {
  Tensors tensors;
  for (const ParameterInfo &p : m.parameters) {
    st::Tensor t;
    t.dtype = st::DType::F32;
    t.shape = p.shape;
    std::vector<float> v(p.bytes / 4);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = salt + static_cast<float>(i) * 0.25f +
             static_cast<float>(p.name.size());
    if (p.name == kLossScaleParameter)
      v[0] = salt == 1.0f ? 0.5f : 0.25f;
    t.data.resize(p.bytes);
    std::memcpy(t.data.data(), v.data(), p.bytes);
    tensors[p.name] = t;
  }
  return tensors;
}

class CheckpointTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string name =
        std::string("tandem-ckpt-") +
        ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
        std::to_string(::getpid());
    dir = (fs::path(::testing::TempDir()) / name).string();
    fs::remove_all(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  /// Writes every rank of a `stages`-stage run at `step` (tensors salted by
  /// the step) and, with `commit`, commits it.
  void save(uint64_t step, int64_t stages = 2, bool commit = true,
            int64_t keep = 0) {
    CheckpointInfo info;
    info.dataPosition = step;
    info.seed = 42;
    std::string error;
    for (int64_t r = 0; r < stages; ++r) {
      Manifest m = manifest(stages, r);
      ASSERT_TRUE(writeRankCheckpoint(
          dir, step, m, values(m, static_cast<float>(step)), info, error))
          << error;
    }
    if (commit) {
      ASSERT_TRUE(commitCheckpoint(dir, step, stages, error, keep)) << error;
    }
  }

  std::string path(uint64_t step, const std::string &file) const {
    return (fs::path(dir) / checkpointName(step) / file).string();
  }

  std::string latest() const {
    std::ifstream in(fs::path(dir) / "latest");
    std::string text;
    std::getline(in, text);
    return text;
  }

  /// Loading `m` fails; returns the error.
  std::string refusal(const Manifest &m,
                      const CheckpointLoadOptions &options = {}) {
    std::string error;
    EXPECT_FALSE(loadRankCheckpoint(dir, m, error, options).has_value());
    return error;
  }

  std::string dir;
};

TEST_F(CheckpointTest, RoundTrip) {
  save(10);
  EXPECT_EQ(latest(), "step-10");
  for (int64_t r = 0; r < 2; ++r) {
    Manifest m = manifest(2, r);
    std::string error;
    std::optional<LoadedRankCheckpoint> loaded =
        loadRankCheckpoint(dir, m, error);
    ASSERT_TRUE(loaded) << error;
    EXPECT_EQ(loaded->info.step, 10u);
    EXPECT_EQ(loaded->info.dataPosition, 10u);
    EXPECT_EQ(loaded->info.seed, 42u);
    EXPECT_EQ(loaded->info.warning, "");
    if (r == 1) {
      EXPECT_EQ(loaded->info.lossScale, std::optional<double>(0.25));
    } else {
      EXPECT_FALSE(loaded->info.lossScale);
    }
    Tensors expected = values(m, 10.0f);
    ASSERT_EQ(loaded->tensors.size(), expected.size());
    for (const auto &[name, tensor] : expected) {
      EXPECT_EQ(loaded->tensors[name].shape, tensor.shape) << name;
      EXPECT_EQ(loaded->tensors[name].data, tensor.data) << name;
    }
  }
  // The files are where the layout says, the index holds what it
  // documents, and no temporary file is left behind.
  std::ifstream in(path(10, "rank1.json"));
  nlohmann::json index = nlohmann::json::parse(in);
  EXPECT_EQ(index["format"], kCheckpointFormat);
  EXPECT_EQ(index["step"], 10);
  EXPECT_EQ(index["data_position"], 10);
  EXPECT_EQ(index["rng"]["seed"], 42);
  EXPECT_EQ(index["loss_scale"], 0.25);
  EXPECT_EQ(index["grid"]["stages"], 2);
  EXPECT_EQ(index["parameters"][0]["name"], "h.1.weight");
  EXPECT_EQ(index["parameters"][0]["type"], "f32 [16, 16]");
  EXPECT_EQ(index["actions"][0], "recv s0.fwd#0 mb 0 from rank 0 channel 0 "
                                 "sequence 0 f32 [4, 16] wire f32");
  EXPECT_EQ(index["safetensors"]["file"], "rank1.safetensors");
  EXPECT_EQ(index["safetensors"]["bytes"],
            fs::file_size(path(10, "rank1.safetensors")));
  EXPECT_EQ(index["fingerprint"]["partition"].get<std::string>().size(), 16u);
  std::ifstream markerIn(path(10, "checkpoint.json"));
  nlohmann::json marker = nlohmann::json::parse(markerIn);
  EXPECT_EQ(marker["ranks"], 2);
  EXPECT_EQ(marker["parameters"], 8);
  for (const auto &entry : fs::recursive_directory_iterator(dir))
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
}

TEST_F(CheckpointTest, LatestOnlyAfterCommit) {
  save(10, 2, /*commit=*/false);
  EXPECT_FALSE(fs::exists(fs::path(dir) / "latest"));
  EXPECT_NE(refusal(manifest(2, 0)).find("no checkpoint"), std::string::npos);
  EXPECT_TRUE(listCheckpoints(dir).empty());

  std::string error;
  ASSERT_TRUE(commitCheckpoint(dir, 10, 2, error)) << error;
  // A crash after rank 0 wrote step 20 but before rank 1 did (and before
  // the commit) leaves step 10 current, loaded without a warning.
  Manifest rank0 = manifest(2, 0);
  CheckpointInfo info;
  ASSERT_TRUE(
      writeRankCheckpoint(dir, 20, rank0, values(rank0, 20.0f), info, error))
      << error;
  EXPECT_EQ(latest(), "step-10");
  std::optional<LoadedRankCheckpoint> loaded =
      loadRankCheckpoint(dir, rank0, error);
  ASSERT_TRUE(loaded) << error;
  EXPECT_EQ(loaded->info.step, 10u);
  EXPECT_EQ(loaded->info.warning, "");
  EXPECT_EQ(loaded->tensors["h.0.weight"].data,
            values(rank0, 10.0f)["h.0.weight"].data);
}

TEST_F(CheckpointTest, CommitFailsOnAMissingRank) {
  save(10);
  Manifest rank0 = manifest(2, 0);
  std::string error;
  ASSERT_TRUE(
      writeRankCheckpoint(dir, 20, rank0, values(rank0, 20.0f), {}, error))
      << error;
  EXPECT_FALSE(commitCheckpoint(dir, 20, 2, error));
  EXPECT_NE(error.find("rank1.json: cannot open"), std::string::npos) << error;
  EXPECT_EQ(latest(), "step-10");
  EXPECT_EQ(listCheckpoints(dir), std::vector<uint64_t>{10});
}

TEST_F(CheckpointTest, CommitChecksTheFiles) {
  save(10, 2, /*commit=*/false);
  fs::resize_file(path(10, "rank0.safetensors"), 100);
  std::string error;
  EXPECT_FALSE(commitCheckpoint(dir, 10, 2, error));
  EXPECT_NE(error.find("rank0.safetensors: truncated or extended: 100 bytes"),
            std::string::npos)
      << error;
  EXPECT_FALSE(fs::exists(fs::path(dir) / "latest"));
  // A commit for another rank count is refused too.
  save(20, 2, /*commit=*/false);
  EXPECT_FALSE(commitCheckpoint(dir, 20, 3, error));
  EXPECT_NE(error.find("a program of 2 ranks, the commit is for 3"),
            std::string::npos)
      << error;
}

TEST_F(CheckpointTest, TruncatedLatestFallsBack) {
  save(10);
  save(20);
  EXPECT_EQ(latest(), "step-20");
  fs::resize_file(path(20, "rank1.safetensors"),
                  fs::file_size(path(20, "rank1.safetensors")) - 7);
  // Both ranks fall back to step 10, rank 0 although its own file is
  // intact: every rank checks every rank's file.
  for (int64_t r = 0; r < 2; ++r) {
    Manifest m = manifest(2, r);
    std::string error;
    std::optional<LoadedRankCheckpoint> loaded =
        loadRankCheckpoint(dir, m, error);
    ASSERT_TRUE(loaded) << error;
    EXPECT_EQ(loaded->info.step, 10u);
    const std::string &w = loaded->info.warning;
    EXPECT_NE(w.find("checkpoint step-20 is unusable"), std::string::npos) << w;
    EXPECT_NE(w.find("rank1.safetensors: truncated"), std::string::npos) << w;
    EXPECT_NE(w.find("loaded step-10"), std::string::npos) << w;
    std::string name = "h." + std::to_string(r) + ".weight";
    EXPECT_EQ(loaded->tensors[name].data, values(m, 10.0f)[name].data);
  }
}

TEST_F(CheckpointTest, CorruptedByteFallsBack) {
  save(10);
  save(20);
  {
    std::fstream f(path(20, "rank0.safetensors"),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-5, std::ios::end);
    char c;
    f.get(c);
    f.seekp(-5, std::ios::end);
    f.put(static_cast<char>(c ^ 0x10));
  }
  std::string error;
  std::optional<LoadedRankCheckpoint> loaded =
      loadRankCheckpoint(dir, manifest(2, 1), error);
  ASSERT_TRUE(loaded) << error;
  EXPECT_EQ(loaded->info.step, 10u);
  EXPECT_NE(loaded->info.warning.find("rank0.safetensors: checksum mismatch"),
            std::string::npos)
      << loaded->info.warning;
  // Checking only its own file, rank 1 takes step 20 (then the caller must
  // make the ranks agree), and step 20 alone is refused for rank 0.
  CheckpointLoadOptions own;
  own.verifyAllRanks = false;
  loaded = loadRankCheckpoint(dir, manifest(2, 1), error, own);
  ASSERT_TRUE(loaded) << error;
  EXPECT_EQ(loaded->info.step, 20u);
  EXPECT_FALSE(loadRankCheckpointAt(dir, 20, manifest(2, 0), error, own));
  EXPECT_NE(error.find("checksum mismatch"), std::string::npos) << error;
}

TEST_F(CheckpointTest, NothingUsable) {
  save(10);
  fs::remove(path(10, "rank1.safetensors"));
  EXPECT_NE(refusal(manifest(2, 0))
                .find("no usable checkpoint; checkpoint "
                      "step-10 is unusable"),
            std::string::npos);
  // A corrupted index is damage, not a mismatch.
  save(20);
  std::ofstream(path(20, "rank0.json")) << "{\"format\": ";
  std::string error = refusal(manifest(2, 0));
  EXPECT_NE(error.find("rank0.json: not a JSON object"), std::string::npos)
      << error;
  EXPECT_NE(error.find("rank1.safetensors: cannot open"), std::string::npos)
      << error;
}

TEST_F(CheckpointTest, RefusesAnotherPartition) {
  save(10, 4);
  // Told from the commit record, before the rank's own file (a rank of
  // another grid may have none).
  EXPECT_NE(refusal(manifest(2, 0))
                .find("checkpoint.json: the checkpoint was written for 4 "
                      "stages, this program has 2"),
            std::string::npos);
  Manifest more = manifest(4, 1);
  more.grid.microbatches = 8;
  EXPECT_NE(
      refusal(more).find("written for 2 microbatches, this program has 8"),
      std::string::npos);
}

TEST_F(CheckpointTest, RefusesAnotherModel) {
  save(10);
  Manifest extra = manifest(2, 1);
  extra.parameters.push_back(param("h.3.ln_1.weight", {16}));
  EXPECT_NE(
      refusal(extra).find(
          "rank1.json: parameter h.3.ln_1.weight is not in the checkpoint"),
      std::string::npos);

  Manifest fewer = manifest(2, 1);
  fewer.parameters.pop_back();
  EXPECT_NE(refusal(fewer).find("the checkpoint holds parameter opt.good_steps "
                                "(f32 []), which this rank does not have"),
            std::string::npos);

  Manifest wider = manifest(2, 0);
  wider.parameters[0] = param("h.0.weight", {16, 32});
  EXPECT_NE(refusal(wider).find("parameter h.0.weight is f32 [16, 16] in the "
                                "checkpoint, f32 [16, 32] in this program"),
            std::string::npos);

  Manifest renamed = manifest(2, 0);
  renamed.program = "mlp";
  EXPECT_NE(refusal(renamed).find("written for program 'gpt', this is 'mlp'"),
            std::string::npos);

  Manifest batch = manifest(2, 0);
  batch.inputs[0].stepShape = {16, 8};
  EXPECT_NE(refusal(batch).find("step input 0 is i32 [8, 8] in the "
                                "checkpoint, i32 [16, 8] in this program"),
            std::string::npos);
}

TEST_F(CheckpointTest, RefusesAnotherSchedule) {
  save(10);
  save(20);
  // Damage the latest too: a mismatch is refused, never "fixed" by falling
  // back to an older checkpoint.
  fs::resize_file(path(20, "rank1.safetensors"), 10);
  Manifest reordered = manifest(2, 0);
  std::swap(reordered.actions[1], reordered.actions[2]);
  std::string error = refusal(reordered);
  EXPECT_NE(error.find("step-20/rank0.json: the schedule differs: 7 actions "
                       "in the checkpoint, 7 in this program; action 1 is "
                       "'send s0.fwd#0 mb 0 to rank 1 channel 0 sequence 0 "
                       "f32 [4, 16] wire f32' in the checkpoint, 'run s0.fwd "
                       "mb 1' here"),
            std::string::npos)
      << error;
  // The runtime's results do not depend on the action order, so a caller
  // may allow it.
  CheckpointLoadOptions options;
  options.allowScheduleChange = true;
  std::optional<LoadedRankCheckpoint> loaded =
      loadRankCheckpoint(dir, reordered, error, options);
  ASSERT_TRUE(loaded) << error;
  EXPECT_EQ(loaded->info.step, 10u);
}

TEST_F(CheckpointTest, WriteChecksTheTensors) {
  Manifest m = manifest(2, 0);
  Tensors tensors = values(m, 1.0f);
  tensors.erase("opt.v.h.0.weight");
  std::string error;
  EXPECT_FALSE(writeRankCheckpoint(dir, 5, m, tensors, {}, error));
  EXPECT_NE(error.find("rank 0: no value for parameter 'opt.v.h.0.weight'"),
            std::string::npos)
      << error;
  tensors = values(m, 1.0f);
  tensors["h.0.weight"].shape = {256};
  EXPECT_FALSE(writeRankCheckpoint(dir, 5, m, tensors, {}, error));
  EXPECT_NE(error.find("the value of parameter 'h.0.weight' is F32 [256]"),
            std::string::npos)
      << error;
}

TEST_F(CheckpointTest, KeepsTheNewest) {
  save(10);
  save(20);
  save(25, 2, /*commit=*/false); // a crashed write, older than the next
  save(30, 2, /*commit=*/true, /*keep=*/2);
  EXPECT_EQ(listCheckpoints(dir), (std::vector<uint64_t>{20, 30}));
  EXPECT_FALSE(fs::exists(fs::path(dir) / "step-10"));
  EXPECT_FALSE(fs::exists(fs::path(dir) / "step-25"));
  EXPECT_EQ(latest(), "step-30");
}

TEST(CheckpointHashTest, Fnv1a64) {
  // Reference values of 64-bit FNV-1a.
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);
}

} // namespace
