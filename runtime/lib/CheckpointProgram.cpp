//===- CheckpointProgram.cpp - checkpoints of a rank program --------------===//
//
// Checkpoint.h's RankProgram adapters: the parameters as the rank holds
// them (copied from its device where needed) into the core, which works on
// a manifest and tensors only (and so builds and is fuzzed without rank
// programs).
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/Checkpoint.h"
#include "tandem/Runtime/ParameterFiles.h"
#include "tandem/Runtime/RankProgram.h"

using namespace tandem;
using namespace tandem::runtime;

bool tandem::runtime::writeRankCheckpoint(const std::string &dir, uint64_t step,
                                          const RankProgram &rank,
                                          const CheckpointInfo &info,
                                          std::string &error) {
  std::map<std::string, st::TensorRef> refs;
  // On the host device the parameters are written where they are; off it,
  // from host copies.
  std::map<std::string, std::vector<uint8_t>> staging;
  for (const ParameterInfo &p : rank.manifest().parameters) {
    if (!rank.parameter(p.name))
      continue;
    const void *host = rank.hostParameter(p.name, staging[p.name], error);
    if (!host)
      return false;
    refs[p.name] = {toSafetensorsType(p.dtype), p.shape, host, p.bytes};
  }
  return writeRankCheckpoint(dir, step, rank.manifest(), refs, info, error);
}

std::optional<CheckpointInfo>
tandem::runtime::loadRankCheckpoint(const std::string &dir, RankProgram &rank,
                                    std::string &error,
                                    const CheckpointLoadOptions &options) {
  std::optional<LoadedRankCheckpoint> loaded =
      loadRankCheckpoint(dir, rank.manifest(), error, options);
  if (!loaded)
    return std::nullopt;
  for (const ParameterInfo &p : rank.manifest().parameters) {
    const st::Tensor &t = loaded->tensors.at(p.name);
    if (!rank.setParameter(p.name, t.data.data(), t.data.size(), error))
      return std::nullopt;
  }
  return loaded->info;
}
