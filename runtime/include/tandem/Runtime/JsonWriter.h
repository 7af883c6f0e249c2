//===- JsonWriter.h - JSON text with chosen one-line parts ------*- C++ -*-===//
//
// Writes JSON the way the runtime's files are laid out for people and for
// FileCheck: nested objects indented by two spaces, and chosen containers
// (one manifest action, one parameter) on a single line. nlohmann-json,
// which the runtime reads with, lays out a whole document one way or the
// other, and prints 0.0 as "0.0" where the shortest text is "0"; this
// writer gives each value the shortest text that reads back as itself.
// No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_JSONWRITER_H
#define TANDEM_RUNTIME_JSONWRITER_H

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::io {

class JsonWriter {
public:
  /// Appends to `out`.
  explicit JsonWriter(std::string &out) : out(out) {}

  /// The next object or array begun, and everything in it, goes on one line.
  JsonWriter &oneLine() {
    nextOneLine = true;
    return *this;
  }
  void beginObject() { begin('{'); }
  void endObject() { end('}'); }
  void beginArray() { begin('['); }
  void endArray() { end(']'); }
  /// The key of the next value in the current object.
  void key(const std::string &name);

  void value(const std::string &text);
  void value(const char *text) { value(std::string(text)); }
  void value(int64_t number);
  void value(uint64_t number);
  void value(int number) { value(static_cast<int64_t>(number)); }
  /// The shortest decimal text that reads back as `number`; a NaN or an
  /// infinity, which JSON cannot hold, is written as null.
  void value(double number);
  void value(bool flag);
  void integers(const std::vector<int64_t> &numbers);
  void strings(const std::vector<std::string> &texts);

  /// key(name) and value(v) in one call.
  template <typename T> void field(const std::string &name, const T &v) {
    key(name);
    value(v);
  }

private:
  struct Frame {
    bool oneLine = false;
    size_t count = 0;
  };
  /// Separator and indentation before an element or a key.
  void element();
  void begin(char open);
  void end(char close);
  void newline(size_t depth);

  std::string &out;
  std::vector<Frame> frames;
  bool nextOneLine = false;
  bool afterKey = false;
};

/// `text` as a JSON string literal, quotes included.
std::string jsonQuote(const std::string &text);

} // namespace tandem::io

#endif // TANDEM_RUNTIME_JSONWRITER_H
