//===- Transport.cpp - what every transport shares ------------------------===//

#include "tandem/Runtime/Transport.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

using namespace tandem::runtime;

Transport::~Transport() = default;

PeerBytes Transport::bytesWith(int64_t rank, int64_t peer) const {
  std::lock_guard<std::mutex> lock(countMutex);
  auto found = counts.find({rank, peer});
  return found == counts.end() ? PeerBytes() : found->second;
}

bool Transport::exchange(int64_t rank, std::vector<TransportOp> &group,
                         std::string &error) {
  if (!post(rank, group, error))
    return false;
  std::vector<TransportOp *> ops;
  for (TransportOp &op : group)
    ops.push_back(&op);
  return wait(rank, ops, error);
}

void Transport::countCompleted(int64_t rank, const TransportOp &op) {
  std::lock_guard<std::mutex> lock(countMutex);
  PeerBytes &peer = counts[{rank, op.peer}];
  (op.send ? peer.sent : peer.received) += op.bytes;
}

namespace {

/// bf16's bits of `value`, rounded to nearest even (NaN stays NaN).
uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float fromBf16(uint16_t half) {
  uint32_t bits = static_cast<uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

template <typename T> T combine(CollectiveOp::Reduction reduction, T a, T b) {
  if (reduction == CollectiveOp::Reduction::Sum)
    return a + b;
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b))
      return std::isnan(a) ? a : b;
  }
  return a < b ? b : a;
}

/// Integers wrap on overflow, as two's complement arithmetic does.
template <typename T> T wrappingSum(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}

template <typename T>
void foldAs(CollectiveOp::Reduction reduction, void *acc, const void *value,
            uint64_t bytes) {
  for (uint64_t i = 0; i < bytes / sizeof(T); ++i) {
    T a, b;
    std::memcpy(&a, static_cast<char *>(acc) + i * sizeof(T), sizeof(T));
    std::memcpy(&b, static_cast<const char *>(value) + i * sizeof(T),
                sizeof(T));
    T c;
    if constexpr (std::is_integral_v<T>)
      c = reduction == CollectiveOp::Reduction::Sum ? wrappingSum(a, b)
                                                    : combine(reduction, a, b);
    else
      c = combine(reduction, a, b);
    std::memcpy(static_cast<char *>(acc) + i * sizeof(T), &c, sizeof(T));
  }
}

} // namespace

bool tandem::runtime::foldCollective(CollectiveOp::Reduction reduction,
                                     ElementType dtype, void *acc,
                                     const void *value, uint64_t bytes,
                                     std::string &error) {
  switch (dtype) {
  case ElementType::F32:
    foldAs<float>(reduction, acc, value, bytes);
    return true;
  case ElementType::F64:
    foldAs<double>(reduction, acc, value, bytes);
    return true;
  case ElementType::I32:
    foldAs<int32_t>(reduction, acc, value, bytes);
    return true;
  case ElementType::I64:
    foldAs<int64_t>(reduction, acc, value, bytes);
    return true;
  case ElementType::BF16:
    // f32 holds a bf16 sum or maximum of two exactly enough that rounding
    // it to bf16 rounds the exact result (24 >= 2 * 8 + 2 bits).
    for (uint64_t i = 0; i < bytes / 2; ++i) {
      uint16_t a, b;
      std::memcpy(&a, static_cast<char *>(acc) + 2 * i, 2);
      std::memcpy(&b, static_cast<const char *>(value) + 2 * i, 2);
      uint16_t c = toBf16(combine(reduction, fromBf16(a), fromBf16(b)));
      std::memcpy(static_cast<char *>(acc) + 2 * i, &c, 2);
    }
    return true;
  default:
    error = std::string("an all_reduce of ") + elementTypeName(dtype) +
            " is not supported by the runtime (f32, f64, bf16, i32, i64)";
    return false;
  }
}

CollectiveHeader CollectiveHeader::of(const CollectiveOp &op) {
  CollectiveHeader header;
  header.kind = static_cast<int32_t>(op.kind);
  header.reduction = op.kind == CollectiveOp::Kind::AllReduce
                         ? static_cast<int32_t>(op.reduction)
                         : 0;
  header.dtype = static_cast<int32_t>(op.dtype);
  header.root = op.kind == CollectiveOp::Kind::Broadcast ? op.root : 0;
  header.bytes = op.bytes;
  header.groupHash = hashMembers(op.group);
  return header;
}

bool CollectiveHeader::operator==(const CollectiveHeader &o) const {
  return kind == o.kind && reduction == o.reduction && dtype == o.dtype &&
         root == o.root && bytes == o.bytes && groupHash == o.groupHash;
}

std::string CollectiveHeader::differenceFrom(const CollectiveHeader &o) const {
  if (kind != o.kind)
    return "kind";
  if (groupHash != o.groupHash)
    return "group order";
  if (dtype != o.dtype || bytes != o.bytes)
    return "type";
  return reduction != o.reduction ? "reduction" : "root";
}

uint64_t tandem::runtime::hashMembers(const std::vector<int64_t> &members) {
  uint64_t hash = 1469598103934665603ull;
  for (int64_t member : members)
    for (int k = 0; k < 8; ++k) {
      hash ^= static_cast<uint64_t>(member >> (8 * k)) & 0xff;
      hash *= 1099511628211ull;
    }
  return hash;
}

bool tandem::runtime::collectiveMembers(int64_t rank, int64_t ranks,
                                        const CollectiveOp &op,
                                        std::vector<int64_t> &members,
                                        std::string &error) {
  members = op.group;
  std::sort(members.begin(), members.end());
  auto member = [&](int64_t r) {
    return std::binary_search(members.begin(), members.end(), r);
  };
  if (members.size() >= 2 &&
      std::adjacent_find(members.begin(), members.end()) == members.end() &&
      members.front() >= 0 && members.back() < ranks && member(rank) &&
      (op.kind != CollectiveOp::Kind::Broadcast || member(op.root)))
    return true;
  std::string group;
  for (int64_t m : op.group)
    group += (group.empty() ? "" : ", ") + std::to_string(m);
  error = "rank " + std::to_string(rank) + " " + op.description +
          ": the group {" + group +
          "} must list at least two distinct ranks of the grid, including "
          "this one" +
          (op.kind == CollectiveOp::Kind::Broadcast ? " and the root" : "");
  return false;
}
