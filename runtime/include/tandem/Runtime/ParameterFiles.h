//===- ParameterFiles.h - rank parameters to and from safetensors -*- C++
//-*-===//
//
// The runtime tools' parameter and output files: tensors named like the
// parameters (`h.0.attn.c_attn.weight`, `opt.m.wte`, ...), the same files
// tandem-eval --params / --save-params reads and writes. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_PARAMETERFILES_H
#define TANDEM_RUNTIME_PARAMETERFILES_H

#include "tandem/Runtime/RankProgram.h"
#include "tandem/Runtime/Safetensors.h"

#include <string>

namespace tandem::runtime {

/// The safetensors type of a manifest element type.
st::DType toSafetensorsType(ElementType type);

/// A tensor of `type` and `shape` holding `buffer`'s bytes.
st::Tensor tensorOf(ElementType type, const std::vector<int64_t> &shape,
                    const Buffer &buffer);

/// Adds every parameter of `rank` to `file` (a parameter two ranks hold is
/// written once), copied from the rank's device; false with `error` when a
/// copy fails.
bool addParameters(const RankProgram &rank, st::File &file, std::string &error);

/// Replaces every parameter of `rank` by the tensor of its name in `file`
/// (`path` names the file in errors); a missing tensor or one of another
/// type or shape is an error.
bool loadParameters(RankProgram &rank, const st::File &file,
                    const std::string &path, std::string &error);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_PARAMETERFILES_H
