//===- tandem-run-inproc.cpp - one step of a native output directory ------===//
//
// tandem-run-inproc DIR (--inputs FILE | (--data FILE | --arrays FILE)
//                        [--steps N] [--first-step K]
//                        [--held-out-fraction F])
//                   [--seed N] [--params FILE] [--save-params FILE]
//                   [--save-outputs FILE] [--device host|cuda[:N]]
//                   [--transport inproc|nccl] [--timeout SECONDS]
//
// Loads DIR/rank<N>.json and their libraries (tandemc --target cpu),
// initializes parameters from the manifests' init specs with the seed (as
// tandem-eval does) or loads them from --params, and runs training steps with
// every rank on its own thread (rendezvous send/recv in process), applying
// the updates after each. With --inputs, one step on the `input.<i>` tensors
// of a safetensors file (tandem-eval --save-inputs writes one); with --data,
// steps K..K+N-1 on batches of token data, exactly the batches and generated
// inputs tandem-eval --train --program uses (StepInputs.h), printing one line
// per step; with --arrays, steps on the file's batches of every step input
// in order (ArrayData.h; no held-out part: the whole file trains). Saves the
// last step's outputs (`result.<k>`) and the parameters.
// --device: where the ranks' memory lives (docs/runtime.md, "Devices"): the
// host, or GPU N through the CUDA driver, all ranks on one device.
// --transport: how the ranks' threads exchange (docs/runtime.md, "NCCL"):
// in process (default), or one NCCL communicator with a rank per thread,
// which needs --device cuda and an NCCL that allows ranks to share a GPU
// (the tests' fake NCCL does; the real one refuses); --timeout bounds a
// group's wait there (default 300 s). No MLIR.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/NcclTransport.h"
#include "tandem/Runtime/OptionValues.h"
#include "tandem/Runtime/ParameterFiles.h"
#include "tandem/Runtime/RankProgram.h"
#include "tandem/Runtime/StepInputs.h"
#include "tandem/Runtime/TransferOrder.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

using namespace tandem;
using namespace tandem::runtime;

static int fail(const std::string &message) {
  std::fprintf(stderr, "tandem-run-inproc: error: %s\n", message.c_str());
  return 1;
}

/// One NCCL communicator over `ranks`, a rank per thread, each joining on
/// its own thread (a rank's join waits for the others); false with `error`
/// when NCCL is missing, the ranks' transfer orders disagree, or a rank
/// cannot join.
static bool joinNccl(std::vector<std::unique_ptr<RankProgram>> &ranks,
                     Device &device, double timeout,
                     std::vector<std::unique_ptr<NcclTransport>> &joined,
                     std::string &error) {
  std::vector<Manifest> manifests;
  for (auto &rank : ranks)
    manifests.push_back(rank->manifest());
  if (!transferOrdersAgree(manifests, error))
    return false;
  const NcclLibrary *nccl = NcclLibrary::open(error);
  if (!nccl)
    return false;
  NcclUniqueId id;
  if (int result = nccl->api().getUniqueId(&id)) {
    error = nccl->failure("ncclGetUniqueId", result);
    return false;
  }
  joined.resize(ranks.size());
  std::vector<std::string> errors(ranks.size());
  std::vector<std::thread> threads;
  int64_t count = static_cast<int64_t>(ranks.size());
  for (int64_t r = 0; r < count; ++r)
    threads.emplace_back([&, r] {
      joined[r] = NcclTransport::create(*nccl, device, id, r, count, timeout,
                                        errors[r]);
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &message : errors)
    if (!message.empty()) {
      error = message;
      return false;
    }
  return true;
}

/// The loss (output 0) of a step, from whichever rank produces it.
static std::optional<double>
lossOf(std::vector<std::unique_ptr<RankProgram>> &ranks,
       const std::map<int64_t, std::shared_ptr<Buffer>> &outputs) {
  for (auto &rank : ranks)
    if (std::optional<double> loss = lossOutput(rank->manifest(), outputs))
      return loss;
  return std::nullopt;
}

int main(int argc, char **argv) {
  std::string dir, inputsFile, dataFile, arraysFile, paramsFile, saveParams,
      saveOutputs;
  std::string deviceName = "host", transportName = "inproc";
  double timeout = 300;
  uint64_t seed = 0, steps = 1, firstStep = 0;
  bool stepsGiven = false, firstGiven = false;
  double heldOutFraction = 0.1;
  std::string error;
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
    } else if (arg == "--data") {
      if (!value(dataFile))
        return fail("--data needs a file");
    } else if (arg == "--arrays") {
      if (!value(arraysFile))
        return fail("--arrays needs a file");
    } else if (arg == "--params") {
      if (!value(paramsFile))
        return fail("--params needs a file");
    } else if (arg == "--save-params") {
      if (!value(saveParams))
        return fail("--save-params needs a file");
    } else if (arg == "--device") {
      if (!value(deviceName))
        return fail("--device needs host or cuda[:N]");
    } else if (arg == "--transport") {
      if (!value(transportName))
        return fail("--transport needs inproc or nccl");
      if (transportName != "inproc" && transportName != "nccl")
        return fail("--transport takes inproc or nccl, not '" + transportName +
                    "'");
    } else if (arg == "--timeout") {
      if (!value(text))
        return fail("--timeout needs a number of seconds");
      char *end = nullptr;
      timeout = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || !(timeout > 0))
        return fail("--timeout needs a positive number of seconds, found '" +
                    text + "'");
    } else if (arg == "--save-outputs") {
      if (!value(saveOutputs))
        return fail("--save-outputs needs a file");
    } else if (arg == "--seed" || arg == "--steps" || arg == "--first-step") {
      if (!value(text))
        return fail(arg + " needs a number");
      uint64_t &out = arg == "--seed"    ? seed
                      : arg == "--steps" ? steps
                                         : firstStep;
      bool positive = arg == "--steps";
      if (!(positive ? parsePositiveCount : parseCount)(arg, text, out, error))
        return fail(error);
      stepsGiven |= arg == "--steps";
      firstGiven |= arg == "--first-step";
    } else if (arg == "--held-out-fraction") {
      if (!value(text))
        return fail("--held-out-fraction needs a number");
      char *end = nullptr;
      heldOutFraction = std::strtod(text.c_str(), &end);
      if (text.empty() || *end)
        return fail("--held-out-fraction needs a number, found '" + text + "'");
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: tandem-run-inproc DIR (--inputs FILE | (--data FILE "
                  "| --arrays FILE)\n"
                  "                         [--steps N] [--first-step K] "
                  "[--held-out-fraction F])\n"
                  "                         [--seed N] [--params FILE] "
                  "[--save-params FILE] [--save-outputs FILE]\n"
                  "                         [--device host|cuda[:N]] "
                  "[--transport inproc|nccl] [--timeout SECONDS]\n");
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
  if (!inputsFile.empty() + !dataFile.empty() + !arraysFile.empty() != 1)
    return fail("give exactly one of --inputs (one step on saved inputs), "
                "--data (training on token data) and --arrays (training on "
                "arrays of every step input)");
  if (!inputsFile.empty() && (stepsGiven || firstGiven))
    return fail("--steps and --first-step need --data or --arrays");
  if (transportName == "nccl" && deviceName == "host")
    return fail("--transport nccl moves GPU memory: it needs --device cuda");

  // The device first: the ranks allocate on it as they load.
  std::unique_ptr<Device> device = openDevice(deviceName, error);
  if (!device)
    return fail(error);
  if (device->kind() != DeviceKind::Host)
    std::fprintf(stderr, "tandem-run-inproc: device %s\n",
                 device->describe().c_str());
  RankProgramOptions loadOptions = RankProgramOptions::fromEnvironment();
  loadOptions.device = device.get();
  std::vector<std::unique_ptr<RankProgram>> ranks;
  if (!loadRanks(dir, ranks, error, loadOptions))
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
    if (!loadParameters(*rank, *params, paramsFile, error))
      return fail(error);
  }

  std::vector<std::unique_ptr<NcclTransport>> nccl;
  std::vector<Transport *> transports;
  if (transportName == "nccl") {
    if (!joinNccl(ranks, *device, timeout, nccl, error))
      return fail("--transport nccl: " + error);
    for (auto &transport : nccl)
      transports.push_back(transport.get());
  }
  const std::vector<Transport *> *perRank =
      transports.empty() ? nullptr : &transports;

  std::map<int64_t, std::shared_ptr<Buffer>> outputs;
  if (!inputsFile.empty()) {
    std::map<int64_t, Buffer> buffers;
    std::vector<InputInfo> wanted;
    for (auto &rank : ranks)
      wanted.insert(wanted.end(), rank->manifest().inputs.begin(),
                    rank->manifest().inputs.end());
    if (!readSavedInputs(inputsFile, wanted, buffers, error))
      return fail(error);
    std::map<int64_t, const Buffer *> inputs;
    for (auto &[index, buffer] : buffers)
      inputs[index] = &buffer;
    if (!runStepInProcess(ranks, inputs, outputs, error, perRank))
      return fail(error);
    if (std::optional<double> loss = lossOf(ranks, outputs))
      std::printf("loss: %.9g\n", *loss);
  } else {
    std::vector<InputInfo> wanted;
    for (auto &rank : ranks)
      for (const InputInfo &in : rank->manifest().inputs)
        wanted.push_back(in);
    StepInputOptions options;
    options.seed = seed;
    options.heldOutFraction = heldOutFraction;
    options.dataName = dataFile;
    std::optional<StepInputs> inputs;
    if (!arraysFile.empty()) {
      std::optional<data::ArrayData> arrays =
          data::ArrayData::read(arraysFile, arrayInputsOf(wanted), error);
      if (!arrays)
        return fail(error);
      inputs = StepInputs::create(wanted, *arrays, options, error);
    } else {
      std::optional<std::vector<int32_t>> tokens =
          data::readTokens(dataFile, error);
      if (!tokens)
        return fail(error);
      inputs = StepInputs::create(wanted, *tokens, options, error);
    }
    if (!inputs)
      return fail(error);
    for (uint64_t step = firstStep; step < firstStep + steps; ++step) {
      auto start = std::chrono::steady_clock::now();
      if (!runStepInProcess(ranks, inputs->get(step), outputs, error, perRank))
        return fail("step " + std::to_string(step) + ": " + error);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      std::optional<double> loss = lossOf(ranks, outputs);
      std::printf("step %llu loss %.9g time %.4f s tokens/s %.0f\n",
                  static_cast<unsigned long long>(step),
                  loss ? *loss : std::nan(""), seconds,
                  inputs->tokensPerStep() / seconds);
      std::fflush(stdout);
    }
  }

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

  st::File paramFile;
  for (auto &rank : ranks)
    if (!addParameters(*rank, paramFile, error))
      return fail(error);
  if (!saveOutputs.empty() && !st::writeFile(saveOutputs, outFile, error))
    return fail(error);
  if (!saveParams.empty() && !st::writeFile(saveParams, paramFile, error))
    return fail(error);
  return 0;
}
