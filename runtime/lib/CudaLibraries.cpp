//===- CudaLibraries.cpp - the CUDA runtime and cuBLASLt, preloaded -------===//

#include "tandem/Runtime/CudaLibraries.h"

#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

using namespace tandem::runtime;

namespace {

/// The folders of TANDEM_CUDA_LIBRARY_PATH, in order.
std::vector<std::string> searchFolders() {
  std::vector<std::string> folders;
  const char *path = std::getenv("TANDEM_CUDA_LIBRARY_PATH");
  if (!path)
    return folders;
  std::stringstream in(path);
  std::string folder;
  while (std::getline(in, folder, ':'))
    if (!folder.empty())
      folders.push_back(folder);
  return folders;
}

} // namespace

void *tandem::runtime::openCudaComponent(const std::string &name,
                                         const std::string &what,
                                         const std::string &folderHint,
                                         std::string &opened,
                                         std::string &error) {
  std::string tried;
  for (const std::string &folder : searchFolders()) {
    std::string path = folder + "/" + name;
    if (void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      opened = path;
      return handle;
    }
    const char *message = dlerror();
    tried += "; " + path + ": " + (message ? message : "cannot load");
  }
  if (void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    opened = name;
    return handle;
  }
  const char *message = dlerror();
  error = "no " + what + ": cannot load '" + name +
          "': " + (message ? message : "unknown error") + tried +
          " (set TANDEM_CUDA_LIBRARY_PATH to the folders that hold it, e.g. "
          "a Python environment's " +
          folderHint + ")";
  return nullptr;
}

const CudaLibraries *CudaLibraries::open(std::string &error) {
  static std::mutex mutex;
  static std::unique_ptr<CudaLibraries> opened;
  std::lock_guard<std::mutex> lock(mutex);
  if (opened)
    return opened.get();
  std::unique_ptr<CudaLibraries> libraries(new CudaLibraries());
  const std::string folder = "site-packages/nvidia/cu13/lib";
  if (!openCudaComponent("libcudart.so.13", "CUDA runtime", folder,
                         libraries->cudart, error))
    return nullptr;
  void *blas = openCudaComponent("libcublasLt.so.13", "cuBLASLt", folder,
                                 libraries->cublasLt, error);
  if (!blas)
    return nullptr;
  auto version =
      reinterpret_cast<size_t (*)()>(dlsym(blas, "cublasLtGetVersion"));
  libraries->create =
      reinterpret_cast<int (*)(void **)>(dlsym(blas, "cublasLtCreate"));
  libraries->destroy =
      reinterpret_cast<int (*)(void *)>(dlsym(blas, "cublasLtDestroy"));
  libraries->statusName = reinterpret_cast<const char *(*)(int)>(
      dlsym(blas, "cublasLtGetStatusName"));
  if (!version || !libraries->create || !libraries->destroy ||
      !libraries->statusName) {
    error = "cuBLASLt '" + libraries->cublasLt +
            "' lacks cublasLtGetVersion, cublasLtCreate, cublasLtDestroy or "
            "cublasLtGetStatusName";
    return nullptr;
  }
  libraries->version = version();
  if (libraries->version < kMinimumCublasLtVersion) {
    error = "cuBLASLt " + std::to_string(libraries->version) + " ('" +
            libraries->cublasLt +
            "') is too old: tandemc's CUDA libraries "
            "need " +
            std::to_string(kMinimumCublasLtVersion) + " or newer";
    return nullptr;
  }
  opened = std::move(libraries);
  return opened.get();
}

void *CudaLibraries::createBlasHandle(std::string &error) const {
  void *handle = nullptr;
  int status = create(&handle);
  if (status != 0) {
    const char *name = statusName(status);
    error = "cublasLtCreate: " + std::string(name ? name : "cuBLAS error") +
            " (" + std::to_string(status) + ")";
    return nullptr;
  }
  return handle;
}

void CudaLibraries::destroyBlasHandle(void *handle) const {
  if (handle)
    destroy(handle);
}
