//===- Options.cpp - tandem-run's command line ----------------------------===//

#include "Options.h"

#include "tandem/Runtime/OptionValues.h"

#include <cstdio>
#include <cstdlib>

using namespace tandem::run;
using tandem::runtime::parseCount;
using tandem::runtime::parsePositive;

int tandem::run::fail(const std::string &message) {
  std::fprintf(stderr, "tandem-run: error: %s\n", message.c_str());
  return 1;
}

bool tandem::run::parseOptions(int argc, char **argv, Options &o,
                               std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string text;
    // The words this option spans, passed on to the ranks unless it only
    // concerns the launch.
    int first = i;
    auto value = [&](std::string &out) {
      if (i + 1 >= argc) {
        error = arg + " needs a value";
        return false;
      }
      out = argv[++i];
      return true;
    };
    bool forward = true;
    if (arg == "--data") {
      if (!value(o.data))
        return false;
    } else if (arg == "--params") {
      if (!value(o.params))
        return false;
    } else if (arg == "--save-params") {
      if (!value(o.saveParams))
        return false;
    } else if (arg == "--ckpt-dir") {
      if (!value(o.ckptDir))
        return false;
    } else if (arg == "--resume") {
      if (!value(o.resume))
        return false;
    } else if (arg == "--ckpt-every" || arg == "--ckpt-keep" ||
               arg == "--eval-every" || arg == "--eval-batches") {
      uint64_t &out = arg == "--ckpt-every"   ? o.ckptEvery
                      : arg == "--ckpt-keep"  ? o.ckptKeep
                      : arg == "--eval-every" ? o.evalEvery
                                              : o.evalBatches;
      if (!value(text) || !parseCount(arg, text, out, error))
        return false;
    } else if (arg == "--trace") {
      if (!value(o.trace))
        return false;
    } else if (arg == "--mpirun") {
      if (!value(o.mpirun))
        return false;
      forward = false;
    } else if (arg == "--seed" || arg == "--steps" || arg == "--first-step" ||
               arg == "--threads") {
      if (!value(text))
        return false;
      uint64_t &out = arg == "--seed"      ? o.seed
                      : arg == "--steps"   ? o.steps
                      : arg == "--threads" ? o.threads
                                           : o.firstStep;
      if (!parseCount(arg, text, out, error))
        return false;
      o.firstStepGiven |= arg == "--first-step";
    } else if (arg == "--held-out-fraction") {
      if (!value(text))
        return false;
      char *end = nullptr;
      o.heldOutFraction = std::strtod(text.c_str(), &end);
      if (text.empty() || *end) {
        error = "--held-out-fraction needs a number, found '" + text + "'";
        return false;
      }
    } else if (arg == "--timeout") {
      if (!value(text) || !parsePositive(arg, text, o.timeout, error))
        return false;
    } else if (arg == "--print-command") {
      o.printCommand = true;
      forward = false;
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: tandem-run DIR --data FILE [--steps N] [--first-step K] "
          "[--seed N]\n"
          "                  [--params FILE] [--save-params FILE] "
          "[--held-out-fraction F]\n"
          "                  [--timeout SECONDS] [--threads T] [--trace "
          "FILE]\n"
          "                  [--mpirun PATH] [--print-command]\n");
      std::exit(0);
    } else if (!arg.empty() && arg[0] == '-') {
      error = "unknown option '" + arg + "'";
      return false;
    } else if (o.dir.empty()) {
      o.dir = arg;
    } else {
      error = "more than one directory";
      return false;
    }
    if (forward)
      for (int k = first; k <= i; ++k)
        o.forwarded.push_back(argv[k]);
  }
  if (o.dir.empty()) {
    error = "no directory (the output of tandemc --target cpu)";
    return false;
  }
  if (o.data.empty()) {
    error = "--data is required (a text or token file)";
    return false;
  }
  if (o.steps == 0) {
    error = "--steps must be at least 1";
    return false;
  }
  if (o.ckptEvery > 0 && o.ckptDir.empty()) {
    error = "--ckpt-every needs --ckpt-dir";
    return false;
  }
  if (!o.ckptDir.empty() && o.ckptEvery == 0) {
    error = "--ckpt-dir needs --ckpt-every K (K >= 1)";
    return false;
  }
  if (!o.resume.empty() && (o.firstStepGiven || !o.params.empty())) {
    error = "--resume takes the step and parameters from the checkpoint; "
            "drop --first-step and --params";
    return false;
  }
  if (o.evalEvery > 0 && o.evalBatches == 0) {
    error = "--eval-batches must be at least 1";
    return false;
  }
  if (o.evalEvery > 0 && o.evalBatches == 0) {
    error = "--eval-batches must be at least 1";
    return false;
  }
  if (o.threads == 0) {
    error = "--threads must be at least 1";
    return false;
  }
  return true;
}
