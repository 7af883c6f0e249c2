//===- FileIO.cpp - whole-file reads and atomic writes --------------------===//

#include "tandem/Runtime/FileIO.h"

#include <cstdio>
#include <fstream>
#include <iterator>

std::optional<std::vector<uint8_t>>
tandem::io::readBytes(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open for reading";
    return std::nullopt;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = path + ": read error";
    return std::nullopt;
  }
  return bytes;
}

bool tandem::io::writeBytesAtomic(const std::string &path,
                                  const std::vector<uint8_t> &bytes,
                                  std::string &error) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      error = tmp + ": cannot open for writing";
      return false;
    }
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    out.flush();
    if (!out) {
      error = tmp + ": write error";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": cannot rename " + tmp + " into place";
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}
