//===- NcclLibrary.cpp - NCCL, loaded at run time -------------------------===//

#include "tandem/Runtime/NcclLibrary.h"

#include "tandem/Runtime/CudaLibraries.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace tandem::runtime;

namespace {

// ncclDataType_t (nccl.h).
constexpr int kNcclInt8 = 0, kNcclUint8 = 1, kNcclInt32 = 2, kNcclInt64 = 4,
              kNcclFloat16 = 6, kNcclFloat32 = 7, kNcclFloat64 = 8,
              kNcclBfloat16 = 9;

template <typename Fn>
bool bind(void *handle, const char *symbol, Fn &slot,
          const std::string &library, std::string &error) {
  void *address = dlsym(handle, symbol);
  if (!address) {
    error = "NCCL '" + library + "' has no " + symbol +
            " (an NCCL older than " +
            NcclLibrary::versionName(kMinimumNcclVersion) + "?)";
    return false;
  }
  slot = reinterpret_cast<Fn>(address);
  return true;
}

} // namespace

int tandem::runtime::ncclDataTypeOf(ElementType type, size_t &elementBytes) {
  elementBytes = elementTypeSize(type);
  switch (type) {
  case ElementType::F32:
    return kNcclFloat32;
  case ElementType::F64:
    return kNcclFloat64;
  case ElementType::I32:
    return kNcclInt32;
  case ElementType::I64:
    return kNcclInt64;
  case ElementType::BF16:
    return kNcclBfloat16;
  case ElementType::F16:
    return kNcclFloat16;
  case ElementType::I8:
    return kNcclInt8;
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
    break;
  }
  elementBytes = 1;
  return kNcclUint8;
}

std::string NcclLibrary::versionName(int version) {
  // NCCL before 2.9 coded its version as major * 1000 + minor * 100 +
  // patch (2.8.4 is 2804); since, as major * 10000 + minor * 100 + patch.
  if (version < 20900)
    return std::to_string(version / 1000) + "." +
           std::to_string(version % 1000 / 100) + "." +
           std::to_string(version % 100);
  return std::to_string(version / 10000) + "." +
         std::to_string(version % 10000 / 100) + "." +
         std::to_string(version % 100);
}

std::string NcclLibrary::failure(const char *what, NcclApi::Result result,
                                 NcclApi::Comm comm) const {
  const char *text = calls.getErrorString ? calls.getErrorString(result) : "";
  std::string message = std::string(what) + ": " +
                        (text && *text ? text : "NCCL error") + " (" +
                        std::to_string(result) + ")";
  const char *last =
      comm && calls.getLastError ? calls.getLastError(comm) : nullptr;
  if (last && *last)
    message += ": " + std::string(last);
  return message;
}

std::unique_ptr<NcclLibrary> NcclLibrary::resolve(void *handle,
                                                  const std::string &library,
                                                  std::string &error) {
  std::unique_ptr<NcclLibrary> nccl(new NcclLibrary());
  nccl->path = library;
  NcclApi &c = nccl->calls;
  if (!bind(handle, "ncclGetVersion", c.getVersion, library, error) ||
      !bind(handle, "ncclGetErrorString", c.getErrorString, library, error) ||
      !bind(handle, "ncclGetLastError", c.getLastError, library, error) ||
      !bind(handle, "ncclGetUniqueId", c.getUniqueId, library, error) ||
      !bind(handle, "ncclCommInitRankConfig", c.commInitRankConfig, library,
            error) ||
      !bind(handle, "ncclCommGetAsyncError", c.commGetAsyncError, library,
            error) ||
      !bind(handle, "ncclCommFinalize", c.commFinalize, library, error) ||
      !bind(handle, "ncclCommDestroy", c.commDestroy, library, error) ||
      !bind(handle, "ncclCommAbort", c.commAbort, library, error) ||
      !bind(handle, "ncclGroupStart", c.groupStart, library, error) ||
      !bind(handle, "ncclGroupEnd", c.groupEnd, library, error) ||
      !bind(handle, "ncclSend", c.send, library, error) ||
      !bind(handle, "ncclRecv", c.recv, library, error))
    return nullptr;
  if (int result = c.getVersion(&nccl->libraryVersion)) {
    error =
        "NCCL '" + library + "': " + nccl->failure("ncclGetVersion", result);
    return nullptr;
  }
  if (nccl->libraryVersion < kMinimumNcclVersion) {
    error = "NCCL " + versionName(nccl->libraryVersion) + " ('" + library +
            "') is too old: the NCCL transport needs " +
            versionName(kMinimumNcclVersion) + " or newer";
    return nullptr;
  }
  return nccl;
}

std::unique_ptr<NcclLibrary> NcclLibrary::load(const std::string &library,
                                               std::string &error) {
  // RTLD_LOCAL: nothing else resolves against NCCL's symbols, and a fake
  // loaded by one test must not shadow another's.
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *message = dlerror();
    error = "no NCCL: cannot load '" + library +
            "': " + (message ? message : "unknown error");
    return nullptr;
  }
  return resolve(handle, library, error);
}

const NcclLibrary *NcclLibrary::open(std::string &error) {
  static std::mutex mutex;
  static std::unique_ptr<NcclLibrary> opened;
  std::lock_guard<std::mutex> lock(mutex);
  if (opened)
    return opened.get();
  const char *chosen = std::getenv("TANDEM_NCCL_LIBRARY");
  if (chosen && *chosen) {
    opened = load(chosen, error);
    return opened.get();
  }
  std::string loaded;
  void *handle = openCudaComponent(
      "libnccl.so.2", "NCCL", "site-packages/nvidia/nccl/lib", loaded, error);
  if (handle)
    opened = resolve(handle, loaded, error);
  return opened.get();
}
