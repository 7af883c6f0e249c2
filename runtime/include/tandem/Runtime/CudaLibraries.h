//===- CudaLibraries.h - the CUDA runtime and cuBLASLt, preloaded -*- C++
//-*-===//
//
// A GPU rank's library needs the CUDA runtime (libcudart.so.13) and
// cuBLASLt (libcublasLt.so.13). Where they are not on the loader's path
// (the GPU machine keeps them in its Python packages, under
// site-packages/nvidia/cu13/lib), the runtime loads them by absolute path
// from the folders in TANDEM_CUDA_LIBRARY_PATH before it opens the rank's
// library, globally, so the library's own references resolve to them; and
// it creates the cuBLASLt handle of each rank's fragment context with the
// same cuBLASLt. docs/runtime.md, "Devices".
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_CUDALIBRARIES_H
#define TANDEM_RUNTIME_CUDALIBRARIES_H

#include <cstddef>
#include <string>

namespace tandem::runtime {

/// The cuBLASLt versions that run tandemc's libraries: CUDA 13's
/// (cublasLtGetVersion's encoding, major * 10000 + minor * 100 + patch).
constexpr size_t kMinimumCublasLtVersion = 130000;

/// Opens the shared library `name` globally from the first folder of
/// TANDEM_CUDA_LIBRARY_PATH that has it, else through the loader's search:
/// the handle and, in `opened`, the path (or name) loaded; nullptr with
/// `error` saying "no `what`", what was tried and, as the fix, to set
/// TANDEM_CUDA_LIBRARY_PATH to a folder like `folderHint`.
void *openCudaComponent(const std::string &name, const std::string &what,
                        const std::string &folderHint, std::string &opened,
                        std::string &error);

class CudaLibraries {
public:
  /// Loads libcudart.so.13 and libcublasLt.so.13 (first from the folders
  /// of TANDEM_CUDA_LIBRARY_PATH, then by name), once per process; nullptr
  /// with `error` naming what is missing and where it was looked for.
  static const CudaLibraries *open(std::string &error);

  /// cublasLtCreate / cublasLtDestroy: a handle, or nullptr with `error`.
  void *createBlasHandle(std::string &error) const;
  void destroyBlasHandle(void *handle) const;
  size_t cublasLtVersion() const { return version; }
  /// The files loaded.
  const std::string &cudartPath() const { return cudart; }
  const std::string &cublasLtPath() const { return cublasLt; }

private:
  CudaLibraries() = default;
  int (*create)(void **handle) = nullptr;
  int (*destroy)(void *handle) = nullptr;
  const char *(*statusName)(int status) = nullptr;
  size_t version = 0;
  std::string cudart, cublasLt;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_CUDALIBRARIES_H
