//===- ScopedEnv.h - an environment variable set for one scope -*- C++ -*-===//

#ifndef TANDEM_UNITTESTS_RUNTIME_SCOPEDENV_H
#define TANDEM_UNITTESTS_RUNTIME_SCOPEDENV_H

#include <cstdlib>
#include <string>

namespace tandem::runtime {

/// Sets an environment variable for one scope, restoring (or unsetting)
/// it on exit.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old, had = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name, saved.c_str(), 1);
    else
      unsetenv(name);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name;
  std::string saved;
  bool had = false;
};

} // namespace tandem::runtime

#endif // TANDEM_UNITTESTS_RUNTIME_SCOPEDENV_H
