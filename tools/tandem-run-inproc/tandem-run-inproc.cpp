//===- tandem-run-inproc.cpp - one step of a native output directory ------===//
//
// tandem-run-inproc DIR --inputs FILE [--seed N] [--params FILE]
//                   [--save-params FILE] [--save-outputs FILE]
//
// Loads DIR/rank<N>.json and their libraries (tandemc --target cpu),
// initializes parameters from the manifests' init specs with the seed (as
// tandem-eval does) or loads them from --params, runs one training step with
// every rank on its own thread (rendezvous send/recv in process), applies
// the updates and saves outputs (`result.<k>`) and parameters. Step inputs
// come from a safetensors file with `input.<i>` tensors of each input's
// step shape (tandem-eval --save-inputs writes one). No MLIR.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/RankProgram.h"
#include "tandem/Runtime/Safetensors.h"

#include <cstdio>
#include <cstring>
#include <string>

using namespace tandem;
using namespace tandem::runtime;

static st::DType toSt(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return st::DType::F32;
  case ElementType::F64:
    return st::DType::F64;
  case ElementType::I32:
    return st::DType::I32;
  case ElementType::I64:
    return st::DType::I64;
  case ElementType::BF16:
    return st::DType::BF16;
  case ElementType::F16:
    return st::DType::F16;
  }
  return st::DType::F32;
}

static int fail(const std::string &message) {
  std::fprintf(stderr, "tandem-run-inproc: error: %s\n", message.c_str());
  return 1;
}

static st::Tensor tensorOf(ElementType type, const std::vector<int64_t> &shape,
                           const Buffer &buffer) {
  st::Tensor tensor;
  tensor.dtype = toSt(type);
  tensor.shape = shape;
  const uint8_t *data = static_cast<const uint8_t *>(buffer.data());
  tensor.data.assign(data, data + buffer.size());
  return tensor;
}

int main(int argc, char **argv) {
  std::string dir, inputsFile, paramsFile, saveParams, saveOutputs;
  uint64_t seed = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--inputs") {
      if (!value(inputsFile))
        return fail("--inputs needs a file");
    } else if (arg == "--params") {
      if (!value(paramsFile))
        return fail("--params needs a file");
    } else if (arg == "--save-params") {
      if (!value(saveParams))
        return fail("--save-params needs a file");
    } else if (arg == "--save-outputs") {
      if (!value(saveOutputs))
        return fail("--save-outputs needs a file");
    } else if (arg == "--seed") {
      if (!value(text))
        return fail("--seed needs a number");
      char *end = nullptr;
      seed = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || *end)
        return fail("--seed needs a number, found '" + text + "'");
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: tandem-run-inproc DIR --inputs FILE [--seed N] "
                  "[--params FILE] [--save-params FILE] "
                  "[--save-outputs FILE]\n");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      return fail("unknown option '" + arg + "'");
    } else if (dir.empty()) {
      dir = arg;
    } else {
      return fail("more than one directory");
    }
  }
  if (dir.empty())
    return fail("no directory (the output of tandemc --target cpu)");
  if (inputsFile.empty())
    return fail("--inputs is required");

  std::string error;
  std::vector<std::unique_ptr<RankProgram>> ranks;
  if (!loadRanks(dir, ranks, error))
    return fail(error);

  std::optional<st::File> params;
  if (!paramsFile.empty()) {
    params = st::readFile(paramsFile, error);
    if (!params)
      return fail(error);
  }
  for (auto &rank : ranks) {
    if (!rank->initParameters(seed, error))
      return fail(error);
    if (!params)
      continue;
    for (const ParameterInfo &p : rank->manifest().parameters) {
      auto it = params->tensors.find(p.name);
      if (it == params->tensors.end())
        return fail(paramsFile + ": no tensor '" + p.name + "'");
      if (it->second.dtype != toSt(p.dtype) || it->second.shape != p.shape)
        return fail(paramsFile + ": tensor '" + p.name +
                    "' differs from the parameter's type");
      if (!rank->setParameter(p.name, it->second.data.data(),
                              it->second.data.size(), error))
        return fail(error);
    }
  }

  std::optional<st::File> inputFile = st::readFile(inputsFile, error);
  if (!inputFile)
    return fail(error);
  std::map<int64_t, Buffer> inputBuffers;
  std::map<int64_t, const Buffer *> inputs;
  for (auto &rank : ranks)
    for (const InputInfo &in : rank->manifest().inputs) {
      if (inputBuffers.count(in.index))
        continue;
      std::string name = "input." + std::to_string(in.index);
      auto it = inputFile->tensors.find(name);
      if (it == inputFile->tensors.end())
        return fail(inputsFile + ": no tensor '" + name + "'");
      if (it->second.dtype != toSt(in.dtype) ||
          it->second.shape != in.stepShape)
        return fail(inputsFile + ": tensor '" + name +
                    "' is not the step input's type (" +
                    elementTypeName(in.dtype) + ", step_shape)");
      Buffer buffer(it->second.data.size());
      std::memcpy(buffer.data(), it->second.data.data(),
                  it->second.data.size());
      inputBuffers[in.index] = std::move(buffer);
      inputs[in.index] = &inputBuffers[in.index];
    }

  std::map<int64_t, std::shared_ptr<Buffer>> outputs;
  if (!runStepInProcess(ranks, inputs, outputs, error))
    return fail(error);

  // Output types come from the producing fragment's result.
  st::File outFile;
  for (auto &rank : ranks) {
    const Manifest &m = rank->manifest();
    for (const OutputInfo &out : m.outputs) {
      const ResultInfo &res =
          m.fragments[m.findFragment(out.fragment)].results[out.result];
      outFile.tensors["result." + std::to_string(out.index)] =
          tensorOf(res.dtype, res.shape, *outputs.at(out.index));
    }
  }
  for (size_t k = 0; k < outputs.size(); ++k)
    if (!outputs.count(static_cast<int64_t>(k)))
      return fail("step outputs are not numbered 0..n-1: " + std::to_string(k) +
                  " is missing");
  for (auto &[name, tensor] : outFile.tensors)
    if (name == "result.0" && tensor.dtype == st::DType::F32 &&
        tensor.shape.empty()) {
      float loss;
      std::memcpy(&loss, tensor.data.data(), sizeof loss);
      std::printf("loss: %.9g\n", loss);
    }

  st::File paramFile;
  for (auto &rank : ranks)
    for (const ParameterInfo &p : rank->manifest().parameters)
      if (!paramFile.tensors.count(p.name))
        paramFile.tensors[p.name] =
            tensorOf(p.dtype, p.shape, *rank->parameter(p.name));
  if (!saveOutputs.empty() && !st::writeFile(saveOutputs, outFile, error))
    return fail(error);
  if (!saveParams.empty() && !st::writeFile(saveParams, paramFile, error))
    return fail(error);
  return 0;
}
