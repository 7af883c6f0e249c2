//===- CheckpointFuzzer.cpp - the checkpoint reader on any index ----------===//
//
// libFuzzer target (scripts/fuzz.sh). A valid one-rank checkpoint of a
// fixed manifest (TANDEM_FUZZ_MANIFEST, the tiny MLP) is written once; each
// input replaces its index (step-1/rank0.json), the file a resumed run
// trusts to say what the checkpoint is. Invariants: loading never crashes,
// hangs, over-allocates or trips a sanitizer; a refusal says why; an
// accepted checkpoint gives every parameter of the manifest with its type,
// shape and the bytes written (the safetensors file is never touched, and
// its checksum is checked), and the step of its folder.
//
// TANDEM_FUZZ_CHECKPOINT_SEED=FILE writes the valid index to FILE and
// exits (how fuzz/corpus/checkpoint was made).
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/Checkpoint.h"
#include "tandem/Runtime/ParameterFiles.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace tandem;
using namespace tandem::runtime;

namespace {

struct Fixture {
  Manifest manifest;
  std::string dir, index;
  std::map<std::string, st::Tensor> tensors;
};

/// The checkpoint folder, removed at exit.
std::string cleanupDir;

[[noreturn]] void failSetup(const std::string &message) {
  std::fprintf(stderr, "checkpoint fuzzer setup: %s\n", message.c_str());
  std::abort();
}

const Fixture &fixture() {
  static Fixture f = [] {
    Fixture f;
    std::string error;
    std::optional<Manifest> m = readManifest(TANDEM_FUZZ_MANIFEST, error);
    if (!m)
      failSetup(error);
    f.manifest = *m;
    char pattern[] = "/tmp/tandem-fuzz-checkpoint-XXXXXX";
    if (!mkdtemp(pattern))
      failSetup("cannot create a folder in /tmp");
    f.dir = pattern;
    cleanupDir = pattern;
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(cleanupDir, ignored);
    });
    // Distinct bytes per parameter, so a swapped or shifted tensor shows.
    uint8_t next = 1;
    for (const ParameterInfo &p : f.manifest.parameters) {
      st::Tensor &t = f.tensors[p.name];
      t.dtype = toSafetensorsType(p.dtype);
      t.shape = p.shape;
      t.data.assign(p.bytes, next++);
    }
    CheckpointInfo info;
    info.step = info.dataPosition = 1;
    if (!writeRankCheckpoint(f.dir, 1, f.manifest, f.tensors, info, error) ||
        !commitCheckpoint(f.dir, 1, 1, error))
      failSetup(error);
    f.index = f.dir + "/step-1/rank0.json";
    if (const char *seed = std::getenv("TANDEM_FUZZ_CHECKPOINT_SEED")) {
      std::filesystem::copy_file(
          f.index, seed, std::filesystem::copy_options::overwrite_existing);
      std::exit(0);
    }
    return f;
  }();
  return f;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Fixture &f = fixture();
  {
    std::ofstream out(f.index, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data),
              static_cast<std::streamsize>(size));
  }
  std::string error;
  std::optional<LoadedRankCheckpoint> loaded =
      loadRankCheckpointAt(f.dir, 1, f.manifest, error);
  if (!loaded) {
    if (error.empty()) {
      std::fprintf(stderr, "refused without a message\n");
      std::abort();
    }
    return 0;
  }
  bool same = loaded->tensors.size() == f.tensors.size();
  for (const auto &[name, tensor] : f.tensors) {
    auto it = loaded->tensors.find(name);
    same &= it != loaded->tensors.end() && it->second.dtype == tensor.dtype &&
            it->second.shape == tensor.shape && it->second.data == tensor.data;
  }
  if (!same) {
    std::fprintf(stderr, "an accepted checkpoint's tensors differ from the "
                         "ones written\n");
    std::abort();
  }
  if (loaded->info.step != 1) {
    std::fprintf(stderr,
                 "an index in step-1 was accepted as step %llu (resuming "
                 "would skip or repeat steps)\n",
                 static_cast<unsigned long long>(loaded->info.step));
    std::abort();
  }
  return 0;
}
