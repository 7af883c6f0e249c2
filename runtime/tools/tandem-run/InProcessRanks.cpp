//===- InProcessRanks.cpp - every rank a thread of this process -----------===//
//
// --transport inproc: no launcher and no MPI. The ranks share one device
// (the host, or one GPU) and the in-process transport, and talk through a
// ThreadControlPlane; each thread runs the same rank main as an MPI rank.
//
//===----------------------------------------------------------------------===//

#include "RankMain.h"

#include "tandem/Runtime/CudaDriver.h"
#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/OptionValues.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace tandem;
using namespace tandem::run;
using namespace tandem::runtime;

/// The device every rank uses: the host, or GPU N of `cuda[:N]`.
static std::unique_ptr<Device> openSharedDevice(const std::string &name,
                                                std::string &error) {
  if (name == "host")
    return makeHostDevice();
  uint64_t ordinal = 0;
  if (name != "cuda" &&
      !parseCount("--device cuda:", name.substr(5), ordinal, error))
    return nullptr;
  const CudaDriver *driver = CudaDriver::open(error);
  if (!driver)
    return nullptr;
  // A number past any int64 is past the last GPU too.
  return openCudaDevice(
      *driver, static_cast<int64_t>(std::min<uint64_t>(ordinal, INT64_MAX)),
      error);
}

int tandem::run::runRanksInProcess(const Options &o) {
  std::string error;
  std::optional<Manifest> first = readManifest(o.dir + "/rank0.json", error);
  if (!first)
    return fail(error);
  int64_t size = first->grid.stages * first->grid.replicas;
  if (size < 1)
    return fail(o.dir + "/rank0.json: the grid has no ranks");
  // Before any rank library loads OpenMP or OpenBLAS, which read these
  // once (mpirun passes them to MPI ranks the same way, Launch.cpp).
  std::string threads = std::to_string(o.threads);
  setenv("OMP_NUM_THREADS", threads.c_str(), 1);
  setenv("OPENBLAS_NUM_THREADS", threads.c_str(), 1);

  std::unique_ptr<Device> device = openSharedDevice(o.device, error);
  if (!device)
    return fail("--device " + o.device + ": " + error);
  if (device->kind() != DeviceKind::Host)
    std::fprintf(stderr, "tandem-run: device %s\n", device->describe().c_str());

  ThreadControlPlane::Group group(size);
  // Made afresh before each step: the transport's deadlock check knows one
  // step (a rank that finished its list never posts again).
  std::unique_ptr<InProcessTransport> transport;
  auto makeTransport = [&] {
    transport = std::make_unique<InProcessTransport>(size, device.get());
  };
  makeTransport();
  // Every rank holds the same object, which each step's transport replaces.
  struct Forward final : Transport {
    std::unique_ptr<InProcessTransport> &to;
    explicit Forward(std::unique_ptr<InProcessTransport> &to) : to(to) {}
    const Device *payloadDevice() const override { return to->payloadDevice(); }
    bool exchange(int64_t rank, std::vector<TransportOp> &group,
                  std::string &error) override {
      bool ok = to->exchange(rank, group, error);
      for (const TransportOp &op : group)
        if (op.completed)
          countCompleted(rank, op);
      return ok;
    }
    bool collective(int64_t rank, CollectiveOp &op,
                    std::string &error) override {
      return to->collective(rank, op, error);
    }
    void finish(int64_t rank) override { to->finish(rank); }
    void abort(const std::string &reason) override { to->abort(reason); }
  } forward(transport);

  std::vector<std::thread> ranks;
  std::vector<int> statuses(size, 0);
  std::vector<std::unique_ptr<ThreadControlPlane>> planes;
  for (int64_t r = 0; r < size; ++r)
    planes.push_back(std::make_unique<ThreadControlPlane>(group, r));
  for (int64_t r = 0; r < size; ++r)
    ranks.emplace_back([&, r] {
      ThreadControlPlane &control = *planes[r];
      RankEnvironment env(control);
      env.sharedDevice = device.get();
      env.transport = &forward;
      env.beginStep = [&] {
        // Nobody is inside the old transport once all have arrived.
        control.barrier();
        if (r == 0)
          makeTransport();
        control.barrier();
      };
      statuses[r] = runRank(o, env);
    });
  for (std::thread &rank : ranks)
    rank.join();
  int status = 0;
  for (int s : statuses)
    status = std::max(status, s);
  return status;
}
