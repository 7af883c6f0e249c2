//===- Checkpoint.cpp - per-rank training checkpoints ---------------------===//

#include "tandem/Runtime/Checkpoint.h"
#include "tandem/Runtime/FileIO.h"
#include "tandem/Runtime/ParameterFiles.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fcntl.h>
#include <unistd.h>

using namespace tandem;
using namespace tandem::runtime;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char *kLatest = "latest";
constexpr const char *kCommitMarker = "checkpoint.json";

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016" PRIx64, value);
  return text;
}

std::string join(const std::string &dir, const std::string &name) {
  return (fs::path(dir) / name).string();
}

std::string stepDir(const std::string &dir, uint64_t step) {
  return join(dir, checkpointName(step));
}

std::string rankStem(int64_t rank) { return "rank" + std::to_string(rank); }

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// "f32 [8, 16]": how the index records a parameter's or input's type.
std::string typeString(ElementType dtype, const std::vector<int64_t> &shape) {
  return std::string(elementTypeName(dtype)) + " " + shapeString(shape);
}

std::string slotString(const SlotRef &slot) {
  std::string text = slot.fragment + "#" + std::to_string(slot.result);
  if (slot.microbatch >= 0)
    text += " mb " + std::to_string(slot.microbatch);
  return text;
}

/// One action as the index records it: everything that decides what the
/// rank computes and exchanges, in a form a person can compare.
std::string actionString(const ActionInfo &action) {
  if (action.op == ActionKind::Run) {
    std::string text = "run " + action.fragment;
    if (action.microbatch >= 0)
      text += " mb " + std::to_string(action.microbatch);
    return text;
  }
  bool send = action.op == ActionKind::Send;
  return std::string(send ? "send " : "recv ") + slotString(action.slot) +
         (send ? " to rank " : " from rank ") + std::to_string(action.peer) +
         " channel " + std::to_string(action.channel) + " sequence " +
         std::to_string(action.sequence) + " " +
         typeString(action.dtype, action.shape) + " wire " +
         elementTypeName(action.wire);
}

/// Fingerprints hash these strings, so that equal fingerprints mean equal
/// recorded lists (the lists themselves give the messages).
uint64_t hashStrings(const std::vector<std::string> &items) {
  uint64_t hash = fnv1a64(nullptr, 0);
  for (const std::string &item : items) {
    hash = fnv1a64(item.data(), item.size(), hash);
    hash = fnv1a64("\n", 1, hash);
  }
  return hash;
}

/// What a rank was compiled as, in the form the index stores.
struct RankDescription {
  std::string program;
  GridInfo grid;
  /// name -> "f32 [8, 16]", in manifest order.
  std::vector<std::pair<std::string, std::string>> parameters;
  /// index -> "i32 [16, 32]" (step shape).
  std::vector<std::pair<int64_t, std::string>> inputs;
  std::vector<std::string> actions;

  std::vector<std::string> partitionItems() const {
    std::vector<std::string> items = {
        "program " + program,
        "grid " + std::to_string(grid.stages) + " " +
            std::to_string(grid.chunks) + " " + std::to_string(grid.replicas) +
            " " + std::to_string(grid.microbatches) + " " +
            std::to_string(grid.rank) + " " + std::to_string(grid.stage) + " " +
            std::to_string(grid.replica)};
    for (const auto &[name, type] : parameters)
      items.push_back("parameter " + name + " " + type);
    for (const auto &[index, type] : inputs)
      items.push_back("input " + std::to_string(index) + " " + type);
    return items;
  }
};

RankDescription describe(const Manifest &manifest) {
  RankDescription d;
  d.program = manifest.program;
  d.grid = manifest.grid;
  for (const ParameterInfo &p : manifest.parameters)
    d.parameters.emplace_back(p.name, typeString(p.dtype, p.shape));
  for (const InputInfo &in : manifest.inputs)
    d.inputs.emplace_back(in.index, typeString(in.dtype, in.stepShape));
  for (const ActionInfo &a : manifest.actions)
    d.actions.push_back(actionString(a));
  return d;
}

/// Writes `bytes` to `path` durably: a temporary file in the same directory,
/// fsync, rename over `path`, fsync of the directory (so the rename itself
/// survives a power loss).
/// Pieces written one after the other (a header, then tensors where they
/// live).
using Chunks = std::vector<std::pair<const void *, size_t>>;

bool writeDurable(const std::string &path, const Chunks &chunks,
                  std::string &error) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = tmp + ": cannot open for writing: " + std::strerror(errno);
    return false;
  }
  for (auto [bytes, size] : chunks) {
    const char *cursor = static_cast<const char *>(bytes);
    size_t left = size;
    while (left > 0) {
      ssize_t written = ::write(fd, cursor, left);
      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0) {
        error = tmp + ": write error: " + std::strerror(errno);
        ::close(fd);
        std::remove(tmp.c_str());
        return false;
      }
      cursor += written;
      left -= static_cast<size_t>(written);
    }
  }
  if (::fsync(fd) != 0) {
    error = tmp + ": fsync failed: " + std::strerror(errno);
    ::close(fd);
    std::remove(tmp.c_str());
    return false;
  }
  if (::close(fd) != 0) {
    error = tmp + ": close failed: " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": cannot rename " + tmp +
            " into place: " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  std::string parent = fs::path(path).parent_path().string();
  int dirFd = ::open(parent.empty() ? "." : parent.c_str(),
                     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    // Some file systems refuse fsync on directories; the data is already
    // durable, so only the rename's durability is at stake and it is not an
    // error.
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return true;
}

bool writeDurable(const std::string &path, const void *bytes, size_t size,
                  std::string &error) {
  return writeDurable(path, Chunks{{bytes, size}}, error);
}

bool writeJsonDurable(const std::string &path, const Json &json,
                      std::string &error) {
  std::string text = json.dump(1) + "\n";
  return writeDurable(path, text.data(), text.size(), error);
}

std::optional<Json> readJson(const std::string &path, std::string &error) {
  std::optional<std::vector<uint8_t>> bytes = io::readBytes(path, error);
  if (!bytes)
    return std::nullopt;
  Json json = Json::parse(bytes->begin(), bytes->end(), nullptr,
                          /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    error = path + ": not a JSON object (truncated or corrupted?)";
    return std::nullopt;
  }
  return json;
}

/// JSON integers read without nlohmann's unchecked conversions, under
/// which a float or an out-of-range number is undefined behavior (found by
/// fuzz/CheckpointFuzzer.cpp: `"step": 1e118`).
uint64_t unsignedValue(const Json &value, const char *name) {
  if (!value.is_number_unsigned())
    throw std::runtime_error(
        std::string("'") + name +
        "' is not a non-negative integer: " + value.dump());
  return value.get<uint64_t>();
}
int64_t integerValue(const Json &value, const char *name) {
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() &&
       value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
    throw std::runtime_error(std::string("'") + name +
                             "' is not a 64-bit integer: " + value.dump());
  return value.get<int64_t>();
}

/// The fields of a rank index, checked for presence and type.
struct RankIndex {
  uint64_t step = 0, dataPosition = 0, seed = 0;
  std::optional<double> lossScale;
  int64_t rank = 0;
  RankDescription description;
  std::string partitionFingerprint, scheduleFingerprint;
  std::string safetensorsFile;
  uint64_t safetensorsBytes = 0;
  std::string checksum;
};

/// Parses a rank index; a missing or mistyped field is an error naming it.
std::optional<RankIndex> parseIndex(const Json &json, const std::string &path,
                                    std::string &error) {
  RankIndex index;
  std::string missing;
  auto field = [&](const Json &object, const char *name) -> const Json * {
    auto it = object.find(name);
    if (it == object.end()) {
      if (missing.empty())
        missing = name;
      return nullptr;
    }
    return &*it;
  };
  auto fail = [&](const std::string &message) -> std::optional<RankIndex> {
    error = path + ": " + message;
    return std::nullopt;
  };
  try {
    const Json *format = field(json, "format");
    if (!format)
      return fail("missing field 'format'");
    if (*format != kCheckpointFormat)
      return fail("unsupported checkpoint format " + format->dump() +
                  " (this runtime reads " + kCheckpointFormat + ")");
    index.step = unsignedValue(json.at("step"), "step");
    index.dataPosition =
        unsignedValue(json.at("data_position"), "data_position");
    index.seed = unsignedValue(json.at("seed"), "seed");
    const Json &scale = json.at("loss_scale");
    if (!scale.is_null())
      index.lossScale = scale.get<double>();
    index.rank = integerValue(json.at("rank"), "rank");
    RankDescription &d = index.description;
    d.program = json.at("program").get<std::string>();
    const Json &grid = json.at("grid");
    d.grid.stages = integerValue(grid.at("stages"), "stages");
    d.grid.chunks = integerValue(grid.at("chunks"), "chunks");
    d.grid.replicas = integerValue(grid.at("replicas"), "replicas");
    d.grid.microbatches = integerValue(grid.at("microbatches"), "microbatches");
    d.grid.rank = integerValue(grid.at("rank"), "rank");
    d.grid.stage = integerValue(grid.at("stage"), "stage");
    d.grid.replica = integerValue(grid.at("replica"), "replica");
    for (const Json &p : json.at("parameters"))
      d.parameters.emplace_back(p.at("name").get<std::string>(),
                                p.at("type").get<std::string>());
    for (const Json &in : json.at("inputs"))
      d.inputs.emplace_back(integerValue(in.at("index"), "index"),
                            in.at("type").get<std::string>());
    for (const Json &a : json.at("actions"))
      d.actions.push_back(a.get<std::string>());
    const Json &fingerprint = json.at("fingerprint");
    index.partitionFingerprint = fingerprint.at("partition").get<std::string>();
    index.scheduleFingerprint = fingerprint.at("schedule").get<std::string>();
    const Json &tensors = json.at("safetensors");
    index.safetensorsFile = tensors.at("file").get<std::string>();
    index.safetensorsBytes = unsignedValue(tensors.at("bytes"), "bytes");
    index.checksum = tensors.at("fnv1a64").get<std::string>();
  } catch (const std::exception &e) {
    // nlohmann's messages name the key ("key 'seed' not found") or the
    // type; ours the field.
    return fail(std::string("malformed index: ") + e.what());
  }
  if (index.safetensorsFile.find('/') != std::string::npos ||
      index.safetensorsFile.empty() || index.safetensorsFile[0] == '.')
    return fail("safetensors file '" + index.safetensorsFile +
                "' is not a plain file name");
  return index;
}

/// Why a step could not be loaded: its files are damaged (an older step may
/// do) or it belongs to another program (no step will do).
enum class Failure { None, Damaged, Mismatch };

/// The size and FNV-1a of the file at `path`, read in pieces (nothing of
/// it is kept).
std::optional<std::pair<uint64_t, uint64_t>>
sizeAndChecksum(const std::string &path, std::string &error) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = path + ": cannot open: " + std::strerror(errno);
    return std::nullopt;
  }
  std::vector<char> piece(1 << 16);
  uint64_t size = 0, hash = fnv1a64(nullptr, 0);
  while (size_t got = std::fread(piece.data(), 1, piece.size(), file)) {
    hash = fnv1a64(piece.data(), got, hash);
    size += got;
  }
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) {
    error = path + ": read error";
    return std::nullopt;
  }
  return std::make_pair(size, hash);
}

/// Reads rank `rank`'s index of step `step` and checks the safetensors file
/// it names: step, rank, size and checksum. With `bytes`, the file is read
/// into it; without, only streamed through the checksum.
Failure readRankFiles(const std::string &dir, uint64_t step, int64_t rank,
                      RankIndex &index, std::vector<uint8_t> *bytes,
                      std::string &error) {
  std::string indexPath = join(stepDir(dir, step), rankStem(rank) + ".json");
  std::optional<Json> json = readJson(indexPath, error);
  if (!json)
    return Failure::Damaged;
  std::optional<RankIndex> parsed = parseIndex(*json, indexPath, error);
  if (!parsed)
    return Failure::Damaged;
  index = std::move(*parsed);
  if (index.step != step || index.rank != rank) {
    error = indexPath + ": the index is of step " + std::to_string(index.step) +
            " rank " + std::to_string(index.rank) + ", expected step " +
            std::to_string(step) + " rank " + std::to_string(rank);
    return Failure::Damaged;
  }
  std::string tensorPath = join(stepDir(dir, step), index.safetensorsFile);
  uint64_t size = 0, hash = 0;
  if (bytes) {
    std::optional<std::vector<uint8_t>> read = io::readBytes(tensorPath, error);
    if (!read)
      return Failure::Damaged;
    *bytes = std::move(*read);
    size = bytes->size();
    hash = fnv1a64(bytes->data(), bytes->size());
  } else {
    auto streamed = sizeAndChecksum(tensorPath, error);
    if (!streamed)
      return Failure::Damaged;
    std::tie(size, hash) = *streamed;
  }
  if (size != index.safetensorsBytes) {
    error = tensorPath + ": truncated or extended: " + std::to_string(size) +
            " bytes, the index records " +
            std::to_string(index.safetensorsBytes);
    return Failure::Damaged;
  }
  std::string checksum = hex64(hash);
  if (checksum != index.checksum) {
    error = tensorPath + ": checksum mismatch (FNV-1a " + checksum +
            ", the index records " + index.checksum +
            "): the file is corrupted";
    return Failure::Damaged;
  }
  return Failure::None;
}

std::string count(int64_t n, const std::string &what) {
  std::string plural = what.back() == 'h' ? "es" : "s";
  return std::to_string(n) + " " + what + (n == 1 ? "" : plural);
}

/// Compares the grid shapes (not the rank's place in it).
bool sameGrid(const GridInfo &saved, const GridInfo &current,
              std::string &error) {
  struct GridField {
    int64_t GridInfo::*field;
    const char *noun;
  };
  // Chunks are virtual stages per rank; microbatches change the
  // accumulation order and hence the bits.
  for (GridField g : {GridField{&GridInfo::stages, "stage"},
                      GridField{&GridInfo::replicas, "replica"},
                      GridField{&GridInfo::chunks, "chunk"},
                      GridField{&GridInfo::microbatches, "microbatch"}}) {
    if (saved.*g.field != current.*g.field) {
      error = "the checkpoint was written for " +
              count(saved.*g.field, g.noun) + ", this program has " +
              std::to_string(current.*g.field);
      return false;
    }
  }
  return true;
}

/// Compares what the checkpoint's rank was compiled as with `current`; on a
/// difference sets `error` to what differs, most fundamental first.
bool sameProgram(const RankDescription &saved, const RankDescription &current,
                 const CheckpointLoadOptions &options, std::string &error) {
  if (!sameGrid(saved.grid, current.grid, error))
    return false;
  if (saved.program != current.program) {
    error = "the checkpoint was written for program '" + saved.program +
            "', this is '" + current.program + "'";
    return false;
  }
  if (saved.grid.stage != current.grid.stage ||
      saved.grid.replica != current.grid.replica) {
    error = "the checkpoint's rank " + std::to_string(saved.grid.rank) +
            " is stage " + std::to_string(saved.grid.stage) + " replica " +
            std::to_string(saved.grid.replica) + ", this rank is stage " +
            std::to_string(current.grid.stage) + " replica " +
            std::to_string(current.grid.replica);
    return false;
  }
  std::map<std::string, std::string> savedParams(saved.parameters.begin(),
                                                 saved.parameters.end());
  std::set<std::string> currentNames;
  for (const auto &[name, type] : current.parameters) {
    currentNames.insert(name);
    auto it = savedParams.find(name);
    if (it == savedParams.end()) {
      error = "parameter " + name + " is not in the checkpoint";
      return false;
    }
    if (it->second != type) {
      error = "parameter " + name + " is " + it->second +
              " in the checkpoint, " + type + " in this program";
      return false;
    }
  }
  for (const auto &[name, type] : saved.parameters)
    if (!currentNames.count(name)) {
      error = "the checkpoint holds parameter " + name + " (" + type +
              "), which this rank does not have";
      return false;
    }
  std::map<int64_t, std::string> savedInputs(saved.inputs.begin(),
                                             saved.inputs.end());
  std::map<int64_t, std::string> currentInputs(current.inputs.begin(),
                                               current.inputs.end());
  if (savedInputs != currentInputs) {
    for (const auto &[index, type] : currentInputs) {
      auto it = savedInputs.find(index);
      if (it == savedInputs.end()) {
        error = "step input " + std::to_string(index) +
                " is not in the checkpoint's program";
        return false;
      }
      if (it->second != type) {
        error = "step input " + std::to_string(index) + " is " + it->second +
                " in the checkpoint, " + type + " in this program";
        return false;
      }
    }
    error = "the checkpoint's program reads step inputs this one does not";
    return false;
  }
  if (!options.allowScheduleChange && saved.actions != current.actions) {
    size_t i = 0;
    while (i < saved.actions.size() && i < current.actions.size() &&
           saved.actions[i] == current.actions[i])
      ++i;
    auto at = [&](const std::vector<std::string> &actions) {
      return i < actions.size() ? "'" + actions[i] + "'"
                                : std::string("the end of the list");
    };
    error = "the schedule differs: " + count(saved.actions.size(), "action") +
            " in the checkpoint, " + std::to_string(current.actions.size()) +
            " in this program; action " + std::to_string(i) + " is " +
            at(saved.actions) + " in the checkpoint, " + at(current.actions) +
            " here";
    return false;
  }
  return true;
}

/// Loads step `step` for `manifest`'s rank.
Failure loadStep(const std::string &dir, uint64_t step,
                 const Manifest &manifest, const CheckpointLoadOptions &options,
                 LoadedRankCheckpoint &out, std::string &error) {
  std::string base = stepDir(dir, step);
  std::string markerPath = join(base, kCommitMarker);
  std::optional<Json> marker = readJson(markerPath, error);
  if (!marker) {
    if (!fs::exists(markerPath))
      error = base + ": not a committed checkpoint (no " + kCommitMarker + ")";
    return Failure::Damaged;
  }
  int64_t ranks = 0;
  GridInfo savedGrid;
  try {
    if (marker->at("format") != kCheckpointFormat ||
        unsignedValue(marker->at("step"), "step") != step)
      throw std::runtime_error("wrong format or step");
    ranks = integerValue(marker->at("ranks"), "ranks");
    const Json &grid = marker->at("grid");
    savedGrid.stages = integerValue(grid.at("stages"), "stages");
    savedGrid.chunks = integerValue(grid.at("chunks"), "chunks");
    savedGrid.replicas = integerValue(grid.at("replicas"), "replicas");
    savedGrid.microbatches =
        integerValue(grid.at("microbatches"), "microbatches");
    int64_t product = 0;
    if (__builtin_mul_overflow(savedGrid.stages, savedGrid.replicas,
                               &product) ||
        ranks != product)
      throw std::runtime_error("ranks is not stages x replicas");
  } catch (const std::exception &e) {
    error = markerPath + ": malformed commit record: " + e.what();
    return Failure::Damaged;
  }

  int64_t rank = manifest.grid.rank;
  RankDescription current = describe(manifest);
  // Compared before the rank's own files, which need not exist in a
  // checkpoint of another grid.
  if (!sameGrid(savedGrid, manifest.grid, error)) {
    error = markerPath + ": " + error;
    return Failure::Mismatch;
  }

  RankIndex index;
  std::vector<uint8_t> bytes;
  std::string indexPath = join(base, rankStem(rank) + ".json");
  // The index alone decides whether this is the same program: compare
  // before the checksums, so a mismatch is reported as one even when some
  // file is damaged too.
  std::optional<Json> indexJson = readJson(indexPath, error);
  if (!indexJson)
    return Failure::Damaged;
  std::optional<RankIndex> parsed = parseIndex(*indexJson, indexPath, error);
  if (!parsed)
    return Failure::Damaged;
  if (!sameProgram(parsed->description, current, options, error)) {
    error = indexPath + ": " + error;
    return Failure::Mismatch;
  }

  for (int64_t r = 0; r < ranks; ++r) {
    if (r != rank && !options.verifyAllRanks)
      continue;
    // Other ranks' files are only checked, not kept.
    RankIndex other;
    Failure failure =
        readRankFiles(dir, step, r, other, r == rank ? &bytes : nullptr, error);
    if (failure != Failure::None)
      return failure;
    if (r == rank)
      index = std::move(other);
  }

  std::string tensorPath = join(base, index.safetensorsFile);
  std::optional<st::File> file = st::parse(bytes, tensorPath, error);
  if (!file)
    return Failure::Damaged;
  for (const ParameterInfo &p : manifest.parameters) {
    auto it = file->tensors.find(p.name);
    if (it == file->tensors.end()) {
      error = tensorPath + ": no tensor '" + p.name + "'";
      return Failure::Damaged;
    }
    if (it->second.dtype != toSafetensorsType(p.dtype) ||
        it->second.shape != p.shape) {
      error = tensorPath + ": tensor '" + p.name + "' is " +
              std::string(st::dtypeName(it->second.dtype)) + " " +
              shapeString(it->second.shape) + ", the parameter is " +
              typeString(p.dtype, p.shape);
      return Failure::Damaged;
    }
  }
  out.tensors = std::move(file->tensors);
  out.info.step = index.step;
  out.info.dataPosition = index.dataPosition;
  out.info.seed = index.seed;
  out.info.lossScale = index.lossScale;
  out.info.warning.clear();
  return Failure::None;
}

std::optional<uint64_t> parseStepName(const std::string &name) {
  const std::string prefix = "step-";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix))
    return std::nullopt;
  uint64_t step = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || step > (UINT64_MAX - 9) / 10)
      return std::nullopt;
    step = step * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return step;
}

/// Every step-<K> directory in `dir`, committed or not, ascending.
std::vector<uint64_t> stepDirectories(const std::string &dir) {
  std::vector<uint64_t> steps;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    if (it->is_directory(ec))
      if (std::optional<uint64_t> step =
              parseStepName(it->path().filename().string()))
        steps.push_back(*step);
  std::sort(steps.begin(), steps.end());
  return steps;
}

} // namespace

uint64_t tandem::runtime::fnv1a64(const void *data, size_t size,
                                  uint64_t hash) {
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string tandem::runtime::checkpointName(uint64_t step) {
  return "step-" + std::to_string(step);
}

std::vector<uint64_t> tandem::runtime::listCheckpoints(const std::string &dir) {
  std::vector<uint64_t> steps;
  for (uint64_t step : stepDirectories(dir))
    if (fs::exists(join(stepDir(dir, step), kCommitMarker)))
      steps.push_back(step);
  return steps;
}

namespace {

/// Writes rank `manifest.grid.rank`'s part of step `step`: the tensors
/// straight from where they live (no copy of the parameters), then the
/// index.
bool writeRankFiles(const std::string &dir, uint64_t step,
                    const Manifest &manifest,
                    const std::map<std::string, st::TensorRef> &tensors,
                    const CheckpointInfo &info, std::string &error) {
  int64_t rank = manifest.grid.rank;
  std::string base = stepDir(dir, step);
  std::string what = base + ": rank " + std::to_string(rank);
  std::map<std::string, st::TensorRef> written;
  for (const ParameterInfo &p : manifest.parameters) {
    auto it = tensors.find(p.name);
    if (it == tensors.end()) {
      error = what + ": no value for parameter '" + p.name + "'";
      return false;
    }
    const st::TensorRef &t = it->second;
    if (t.dtype != toSafetensorsType(p.dtype) || t.shape != p.shape ||
        t.size != p.bytes) {
      error = what + ": the value of parameter '" + p.name + "' is " +
              std::string(st::dtypeName(t.dtype)) + " " + shapeString(t.shape) +
              " (" + std::to_string(t.size) + " bytes), the parameter is " +
              typeString(p.dtype, p.shape);
      return false;
    }
    written[p.name] = t;
  }
  std::map<std::string, std::string> metadata = {
      {"format", kCheckpointFormat},
      {"step", std::to_string(step)},
      {"rank", std::to_string(rank)}};
  std::string header = st::serializeHeader(written, metadata);
  Chunks chunks = {{header.data(), header.size()}};
  uint64_t size = header.size();
  uint64_t hash = fnv1a64(header.data(), header.size());
  for (const auto &[name, t] : written) {
    chunks.push_back({t.data, t.size});
    size += t.size;
    hash = fnv1a64(t.data, t.size, hash);
  }

  std::optional<double> lossScale;
  auto scale = written.find(kLossScaleParameter);
  if (scale != written.end() && scale->second.dtype == st::DType::F32 &&
      scale->second.size == sizeof(float)) {
    float value;
    std::memcpy(&value, scale->second.data, sizeof(float));
    lossScale = value;
  }

  std::error_code ec;
  fs::create_directories(base, ec);
  if (ec) {
    error = base + ": cannot create the checkpoint directory: " + ec.message();
    return false;
  }

  std::string stem = rankStem(rank);
  std::string tensorName = stem + ".safetensors";
  // The tensors first and the index last: an index names only a file that
  // is already in place.
  if (!writeDurable(join(base, tensorName), chunks, error))
    return false;

  RankDescription d = describe(manifest);
  Json index;
  index["format"] = kCheckpointFormat;
  index["step"] = step;
  index["data_position"] = info.dataPosition;
  index["seed"] = info.seed;
  index["rng"] = {{"seed", info.seed}, {"step", step}};
  index["loss_scale"] = lossScale ? Json(*lossScale) : Json(nullptr);
  index["rank"] = rank;
  index["program"] = d.program;
  index["grid"] = {
      {"stages", d.grid.stages},     {"chunks", d.grid.chunks},
      {"replicas", d.grid.replicas}, {"microbatches", d.grid.microbatches},
      {"rank", d.grid.rank},         {"stage", d.grid.stage},
      {"replica", d.grid.replica}};
  Json params = Json::array();
  for (const auto &[name, type] : d.parameters)
    params.push_back({{"name", name}, {"type", type}});
  index["parameters"] = params;
  Json inputs = Json::array();
  for (const auto &[inputIndex, type] : d.inputs)
    inputs.push_back({{"index", inputIndex}, {"type", type}});
  index["inputs"] = inputs;
  index["actions"] = d.actions;
  index["fingerprint"] = {{"partition", hex64(hashStrings(d.partitionItems()))},
                          {"schedule", hex64(hashStrings(d.actions))}};
  index["safetensors"] = {
      {"file", tensorName}, {"bytes", size}, {"fnv1a64", hex64(hash)}};
  return writeJsonDurable(join(base, stem + ".json"), index, error);
}

} // namespace

bool tandem::runtime::writeRankCheckpoint(
    const std::string &dir, uint64_t step, const Manifest &manifest,
    const std::map<std::string, st::Tensor> &tensors,
    const CheckpointInfo &info, std::string &error) {
  std::map<std::string, st::TensorRef> refs;
  for (const auto &[name, t] : tensors)
    refs[name] = st::refTo(t);
  return writeRankFiles(dir, step, manifest, refs, info, error);
}

bool tandem::runtime::writeRankCheckpoint(
    const std::string &dir, uint64_t step, const Manifest &manifest,
    const std::map<std::string, st::TensorRef> &tensors,
    const CheckpointInfo &info, std::string &error) {
  return writeRankFiles(dir, step, manifest, tensors, info, error);
}

bool tandem::runtime::commitCheckpoint(const std::string &dir, uint64_t step,
                                       int64_t ranks, std::string &error,
                                       int64_t keep) {
  std::string base = stepDir(dir, step);
  if (ranks < 1) {
    error = base + ": cannot commit a checkpoint of " + std::to_string(ranks) +
            " ranks";
    return false;
  }
  // The whole model: every rank's parameters, by name (a parameter two
  // ranks hold must agree).
  std::map<std::string, std::string> model;
  std::string program;
  GridInfo grid0;
  for (int64_t r = 0; r < ranks; ++r) {
    RankIndex index;
    if (readRankFiles(dir, step, r, index, nullptr, error) != Failure::None) {
      error = "cannot commit " + base + ": " + error;
      return false;
    }
    const GridInfo &grid = index.description.grid;
    if (r == 0) {
      grid0 = grid;
      program = index.description.program;
    }
    std::string gridError;
    if (grid.stages * grid.replicas != ranks) {
      error = "cannot commit " + base + ": rank " + std::to_string(r) +
              "'s index is of a program of " +
              std::to_string(grid.stages * grid.replicas) +
              " ranks, the commit is for " + std::to_string(ranks);
      return false;
    }
    if (!sameGrid(grid0, grid, gridError) ||
        index.description.program != program) {
      error = "cannot commit " + base + ": rank " + std::to_string(r) +
              "'s index is of another program or grid than rank 0's";
      return false;
    }
    for (const auto &[name, type] : index.description.parameters) {
      auto [it, inserted] = model.emplace(name, type);
      if (!inserted && it->second != type) {
        error = "cannot commit " + base + ": parameter " + name + " is " +
                it->second + " on one rank and " + type + " on rank " +
                std::to_string(r);
        return false;
      }
    }
  }
  std::vector<std::string> modelItems;
  for (const auto &[name, type] : model)
    modelItems.push_back(name + " " + type);
  Json marker = {{"format", kCheckpointFormat},
                 {"step", step},
                 {"ranks", ranks},
                 {"program", program},
                 {"grid",
                  {{"stages", grid0.stages},
                   {"chunks", grid0.chunks},
                   {"replicas", grid0.replicas},
                   {"microbatches", grid0.microbatches}}},
                 {"parameters", model.size()},
                 {"model_fingerprint", hex64(hashStrings(modelItems))}};
  if (!writeJsonDurable(join(base, kCommitMarker), marker, error))
    return false;
  std::string latest = checkpointName(step) + "\n";
  if (!writeDurable(join(dir, kLatest), latest.data(), latest.size(), error))
    return false;

  if (keep > 0) {
    std::vector<uint64_t> committed = listCheckpoints(dir);
    std::set<uint64_t> kept;
    for (size_t i = committed.size(); i-- > 0 && kept.size() < size_t(keep);)
      kept.insert(committed[i]);
    kept.insert(step);
    // Only steps before this one: a newer uncommitted directory may be
    // another process's write in progress.
    for (uint64_t old : stepDirectories(dir)) {
      if (old >= step || kept.count(old))
        continue;
      std::error_code ec;
      fs::remove_all(stepDir(dir, old), ec);
      if (ec) {
        error = stepDir(dir, old) +
                ": cannot remove an old checkpoint: " + ec.message();
        return false;
      }
    }
  }
  return true;
}

std::optional<LoadedRankCheckpoint> tandem::runtime::loadRankCheckpointAt(
    const std::string &dir, uint64_t step, const Manifest &manifest,
    std::string &error, const CheckpointLoadOptions &options) {
  LoadedRankCheckpoint loaded;
  if (loadStep(dir, step, manifest, options, loaded, error) != Failure::None)
    return std::nullopt;
  return loaded;
}

std::optional<LoadedRankCheckpoint> tandem::runtime::loadRankCheckpoint(
    const std::string &dir, const Manifest &manifest, std::string &error,
    const CheckpointLoadOptions &options) {
  std::string latestPath = join(dir, kLatest);
  if (!fs::exists(latestPath)) {
    error = dir + ": no checkpoint (" + latestPath + " does not exist)";
    return std::nullopt;
  }
  std::optional<std::vector<uint8_t>> text = io::readBytes(latestPath, error);
  if (!text)
    return std::nullopt;
  std::string name(text->begin(), text->end());
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
    name.pop_back();
  std::optional<uint64_t> latest = parseStepName(name);
  if (!latest) {
    error = latestPath + ": expected 'step-<K>', found '" + name + "'";
    return std::nullopt;
  }

  std::vector<uint64_t> candidates = {*latest};
  std::vector<uint64_t> committed = listCheckpoints(dir);
  for (size_t i = committed.size(); i-- > 0;)
    if (committed[i] < *latest)
      candidates.push_back(committed[i]);

  std::vector<std::string> skipped;
  for (uint64_t step : candidates) {
    LoadedRankCheckpoint loaded;
    std::string why;
    Failure failure = loadStep(dir, step, manifest, options, loaded, why);
    if (failure == Failure::None) {
      if (!skipped.empty()) {
        std::string warning;
        for (const std::string &s : skipped)
          warning += (warning.empty() ? "" : "; ") + s;
        loaded.info.warning = warning + "; loaded " + checkpointName(step) +
                              " (" + stepDir(dir, step) + ") instead";
      }
      return loaded;
    }
    if (failure == Failure::Mismatch) {
      error = why;
      return std::nullopt;
    }
    skipped.push_back("checkpoint " + checkpointName(step) +
                      " is unusable: " + why);
  }
  error = dir + ": no usable checkpoint";
  for (const std::string &s : skipped)
    error += "; " + s;
  return std::nullopt;
}
