//===- NcclLibrary.h - NCCL, loaded at run time -----------------*- C++ -*-===//
//
// The NCCL transport (NcclTransport.h) reaches NCCL through its C ABI,
// opened with dlopen by its versioned name (libnccl.so.2), never linked,
// as the CUDA driver is (CudaDriver.h): the runtime builds and passes its
// tests without NCCL, and says clearly why it cannot use it ("no NCCL",
// "NCCL 2.12 is too old"). The declarations below are NCCL's ABI written
// out, so that the runtime needs no NCCL headers. The tests load a fake
// NCCL through the same path (unittests/Runtime/FakeNccl.cpp).
// docs/runtime.md, "NCCL".
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_NCCLLIBRARY_H
#define TANDEM_RUNTIME_NCCLLIBRARY_H

#include "tandem/Runtime/Manifest.h"

#include <cstddef>
#include <memory>
#include <string>

namespace tandem::runtime {

/// ncclGetVersion's encoding, major * 10000 + minor * 100 + patch.
constexpr int ncclVersionCode(int major, int minor, int patch) {
  return major * 10000 + minor * 100 + patch;
}

/// The oldest NCCL the transport uses: non-blocking communicators
/// (ncclConfig_t's `blocking`, ncclCommGetAsyncError polled for
/// ncclInProgress) and ncclCommFinalize arrived in 2.14; 2.18 is the
/// oldest whose non-blocking point-to-point groups NVIDIA documents
/// without caveats.
constexpr int kMinimumNcclVersion = ncclVersionCode(2, 18, 0);

/// ncclUniqueId: opaque bytes that rank 0 makes and every rank receives.
struct NcclUniqueId {
  char internal[128];
};

/// The prefix of ncclConfig_t that NCCL 2.17 defined (its fields up to
/// `netName`), marked as 2.14's: NCCL copies `size` bytes over its defaults
/// and checks `magic`, and for a version before 2.17 puts the four fields
/// after `blocking` back to their defaults, so only `blocking` (all the
/// transport sets) takes effect, for every NCCL since 2.14.
struct NcclConfig {
  size_t size = sizeof(NcclConfig);
  unsigned magic = 0xcafebeef;
  unsigned version = ncclVersionCode(2, 14, 0);
  int blocking = kUndefined;
  int cgaClusterSize = kUndefined;
  int minCTAs = kUndefined;
  int maxCTAs = kUndefined;
  const char *netName = nullptr;
  /// NCCL_CONFIG_UNDEF_INT: NCCL's default applies.
  static constexpr int kUndefined = -2147483647 - 1;
};

/// ncclResult_t values the transport tells apart.
enum NcclResult : int {
  kNcclSuccess = 0,
  kNcclInvalidUsage = 5,
  kNcclRemoteError = 6,
  kNcclInProgress = 7,
};

/// ncclDataType_t of a payload's element type: a message's count is in
/// elements of it, so NCCL (and the fake) compare both sides' counts.
/// The types NCCL lacks (f8 before 2.24) travel as ncclUint8 bytes.
int ncclDataTypeOf(ElementType type, size_t &elementBytes);

/// NCCL's entry points the transport calls. Every call returns an
/// ncclResult_t.
struct NcclApi {
  using Result = int;
  using Comm = void *;

  Result (*getVersion)(int *version);
  Result (*getUniqueId)(NcclUniqueId *id);
  Result (*commInitRankConfig)(Comm *comm, int ranks, NcclUniqueId id, int rank,
                               NcclConfig *config);
  Result (*commGetAsyncError)(Comm comm, Result *state);
  Result (*commFinalize)(Comm comm);
  Result (*commDestroy)(Comm comm);
  Result (*commAbort)(Comm comm);
  const char *(*getErrorString)(Result result);
  const char *(*getLastError)(Comm comm);
  Result (*groupStart)();
  Result (*groupEnd)();
  Result (*send)(const void *data, size_t count, int type, int peer, Comm comm,
                 void *stream);
  Result (*recv)(void *data, size_t count, int type, int peer, Comm comm,
                 void *stream);
};

/// The loaded NCCL: opened once per process and kept open.
class NcclLibrary {
public:
  /// Opens NCCL: TANDEM_NCCL_LIBRARY when set (a path, and the tests'
  /// fake), else libnccl.so.2 from the folders of TANDEM_CUDA_LIBRARY_PATH
  /// (the GPU machine's Python packages keep it in nvidia/nccl/lib), else
  /// through the loader's search; resolves every entry point and checks
  /// the version against kMinimumNcclVersion. The first success is kept
  /// for the process; nullptr with `error` naming what failed.
  static const NcclLibrary *open(std::string &error);
  /// Loads NCCL from `library` (a path or a name) without keeping it:
  /// open's work, for tests of its errors.
  static std::unique_ptr<NcclLibrary> load(const std::string &library,
                                           std::string &error);

  const NcclApi &api() const { return calls; }
  /// ncclGetVersion's value, and as "2.28.9".
  int version() const { return libraryVersion; }
  static std::string versionName(int version);
  const std::string &library() const { return path; }
  /// "what: ncclInvalidUsage (5)", with NCCL's last error for `comm` when
  /// it has one.
  std::string failure(const char *what, NcclApi::Result result,
                      NcclApi::Comm comm = nullptr) const;

private:
  NcclLibrary() = default;
  static std::unique_ptr<NcclLibrary>
  resolve(void *handle, const std::string &library, std::string &error);
  NcclApi calls = {};
  std::string path;
  int libraryVersion = 0;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_NCCLLIBRARY_H
