//===- ManifestNames.h - the manifest's names for its enumerations -------===//
//
// Private to the manifest's reader (Manifest.cpp) and writer
// (ManifestWriter.cpp): one table per enumeration, so the two cannot spell
// a value differently.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_MANIFESTNAMES_H
#define TANDEM_RUNTIME_LIB_MANIFESTNAMES_H

#include "tandem/Runtime/Manifest.h"

#include <cstddef>

namespace tandem::runtime::names {

template <typename E> struct Named {
  const char *name;
  E value;
};

inline constexpr Named<MemorySpace> kSpaces[] = {
    {"host", MemorySpace::Host}, {"device", MemorySpace::Device}};
inline constexpr Named<TargetKind> kTargetKinds[] = {
    {"cpu", TargetKind::Cpu}, {"cuda", TargetKind::Cuda}};
inline constexpr Named<rng::InitKind> kInitKinds[] = {
    {"zeros", rng::InitKind::Zeros},
    {"ones", rng::InitKind::Ones},
    {"normal", rng::InitKind::Normal},
    {"uniform", rng::InitKind::Uniform},
    {"orthonormal", rng::InitKind::Orthonormal}};
inline constexpr Named<InputRole> kRoles[] = {
    {"tokens", InputRole::Tokens},
    {"targets", InputRole::Targets},
    {"other", InputRole::Other},
    {"ambiguous", InputRole::Ambiguous}};
inline constexpr Named<SlotRule> kRules[] = {
    {"same_microbatch", SlotRule::SameMicrobatch},
    {"step_value", SlotRule::StepValue},
    {"sum_microbatches", SlotRule::SumMicrobatches}};
inline constexpr Named<Accumulation> kAccumulations[] = {
    {"runtime", Accumulation::Runtime}, {"fragment", Accumulation::Fragment}};
inline constexpr Named<ActionKind> kActions[] = {
    {"run", ActionKind::Run},
    {"send", ActionKind::Send},
    {"recv", ActionKind::Recv},
    {"all_reduce", ActionKind::AllReduce},
    {"broadcast", ActionKind::Broadcast}};
inline constexpr Named<PlanBufferKind> kBufferKinds[] = {
    {"slot", PlanBufferKind::Slot},
    {"accumulator", PlanBufferKind::Accumulator},
    {"scratch", PlanBufferKind::Scratch}};

/// The name of `value` in `table`.
template <typename E, size_t N>
const char *nameOf(const Named<E> (&table)[N], E value) {
  for (const Named<E> &entry : table)
    if (entry.value == value)
      return entry.name;
  return "?";
}

} // namespace tandem::runtime::names

#endif // TANDEM_RUNTIME_LIB_MANIFESTNAMES_H
