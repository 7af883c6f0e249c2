//===- InProcessRanks.cpp - every rank a thread of this process -----------===//
//
// --launcher threads (implied by --transport inproc): no launcher and no
// MPI. The ranks share one device (the host, or one GPU) and talk through a
// ThreadControlPlane; each thread runs the same rank main as an MPI rank.
// Their transfers go over the in-process transport, or with --transport
// nccl over one NCCL communicator that each rank joins on its own thread
// (RankMain.cpp; only an NCCL that allows ranks to share a GPU, the tests'
// fake, runs it).
//
//===----------------------------------------------------------------------===//

#include "RankMain.h"

#include "tandem/Runtime/Manifest.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace tandem;
using namespace tandem::run;
using namespace tandem::runtime;

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

  std::unique_ptr<Device> device = openDevice(o.device, error);
  if (!device)
    return fail(error);
  if (device->kind() != DeviceKind::Host)
    std::fprintf(stderr, "tandem-run: device %s\n", device->describe().c_str());
  // NCCL refuses two ranks of one communicator on one GPU ("Duplicate GPU
  // detected"), after every rank has started: said before any does. The
  // fake driver's GPU (host-addressable) goes on, over the tests' fake NCCL.
  if (o.transport == "nccl" && size > 1 && device->kind() == DeviceKind::Cuda &&
      !device->hostAddressable())
    return fail("--transport nccl with ranks as threads puts " +
                std::to_string(size) + " ranks on " + device->describe() +
                ", which NCCL refuses: use --transport inproc for ranks on "
                "one GPU, or one process per GPU (--launcher local, mpirun)");

  // One copy of --arrays for all ranks, checked before any starts.
  std::shared_ptr<const data::ArrayData> arrays;
  if (!o.arrays.empty()) {
    arrays = readArrays(o, size, error);
    if (!arrays)
      return fail(error);
  }

  ThreadControlPlane::Group group(size);
  // Over NCCL each rank joins the communicator in its rank main instead.
  const bool inProcess = o.transport == "inproc";
  InProcessTransport transport(size, device.get());
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
      env.arrays = arrays;
      if (inProcess) {
        env.transport = &transport;
        env.beginStep = [&] {
          // Nobody is inside the transport once all have arrived.
          control.barrier();
          if (r == 0)
            transport.reset();
          control.barrier();
        };
      }
      statuses[r] = runRank(o, env);
    });
  for (std::thread &rank : ranks)
    rank.join();
  int status = 0;
  for (int s : statuses)
    status = std::max(status, s);
  return status;
}
