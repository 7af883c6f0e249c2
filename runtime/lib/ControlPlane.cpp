//===- ControlPlane.cpp - ranks as threads of one process -----------------===//

#include "tandem/Runtime/ControlPlane.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace tandem::runtime;

ControlPlane::~ControlPlane() = default;

ThreadControlPlane::Group::Group(int64_t size)
    : slots(static_cast<size_t>(std::max<int64_t>(size, 1))) {}

void ThreadControlPlane::Group::arrive() {
  std::unique_lock<std::mutex> lock(mutex);
  uint64_t mine = generation;
  if (++arrived == size()) {
    arrived = 0;
    ++generation;
    changed.notify_all();
    return;
  }
  changed.wait(lock, [&] { return generation != mine; });
}

std::vector<std::string>
ThreadControlPlane::exchange(const std::string &bytes) {
  {
    std::lock_guard<std::mutex> lock(group.mutex);
    group.slots[self] = bytes;
  }
  // After the first barrier every slot holds this round's value; nobody
  // writes the next round's before the second.
  group.arrive();
  std::vector<std::string> all;
  {
    std::lock_guard<std::mutex> lock(group.mutex);
    all = group.slots;
  }
  group.arrive();
  return all;
}

int64_t ThreadControlPlane::maxOf(int64_t value) {
  std::string bytes(sizeof value, '\0');
  std::memcpy(bytes.data(), &value, sizeof value);
  int64_t most = value;
  for (const std::string &theirs : exchange(bytes)) {
    int64_t v = 0;
    std::memcpy(&v, theirs.data(), sizeof v);
    most = std::max(most, v);
  }
  return most;
}

std::vector<std::string> ThreadControlPlane::gather(const std::string &bytes,
                                                    int64_t root) {
  std::vector<std::string> all = exchange(bytes);
  if (self != root)
    all.clear();
  return all;
}

void ThreadControlPlane::broadcast(void *data, size_t size, int64_t root) {
  std::string mine(static_cast<const char *>(data), size);
  std::vector<std::string> all = exchange(mine);
  std::memcpy(data, all[root].data(), std::min(size, all[root].size()));
}

void ThreadControlPlane::abortJob(const std::string &message) {
  {
    std::lock_guard<std::mutex> lock(group.mutex);
    // Ranks blocked on the failing one fail too, with messages about the
    // failure rather than its cause: the first message is the one to read.
    if (!group.aborting) {
      group.aborting = true;
      std::fprintf(stderr, "tandem-run: error: %s\n", message.c_str());
    }
    std::fflush(stdout);
    std::fflush(stderr);
  }
  std::_Exit(1);
}
